package tui

import "github.com/charmbracelet/bubbles/key"

// keyMap is the console's one key map; the help bar and the full help read it.
type keyMap struct {
	Up, Down       key.Binding
	Tab            key.Binding
	Filter         key.Binding
	Acquire        key.Binding
	Extend         key.Binding
	Release        key.Binding
	ForceExpire    key.Binding
	Help           key.Binding
	Quit           key.Binding
	Confirm, Deny  key.Binding
	Submit, Cancel key.Binding
}

func newKeyMap(readOnly bool) keyMap {
	k := keyMap{
		Up:          key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:        key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		Tab:         key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "panel")),
		Filter:      key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		Acquire:     key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "acquire")),
		Extend:      key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "extend")),
		Release:     key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "release")),
		ForceExpire: key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "force-expire")),
		Help:        key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:        key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Confirm:     key.NewBinding(key.WithKeys("y", "Y"), key.WithHelp("y", "yes")),
		Deny:        key.NewBinding(key.WithKeys("n", "N", "esc"), key.WithHelp("n", "no")),
		Submit:      key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "ok")),
		Cancel:      key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
	}
	if readOnly {
		// Disabled bindings neither match nor show in the help.
		for _, b := range []*key.Binding{&k.Acquire, &k.Extend, &k.Release, &k.ForceExpire} {
			b.SetEnabled(false)
		}
	}
	return k
}

// writing reports whether a key press is one of the writing keys, whatever the mode.
func writingKey(s string) bool { return s == "a" || s == "e" || s == "r" || s == "x" }

// ShortHelp is the help bar.
func (k keyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Up, k.Acquire, k.Extend, k.Release, k.ForceExpire, k.Filter, k.Tab, k.Help, k.Quit}
}

// FullHelp is the `?` screen, in columns: every key the console takes.
func (k keyMap) FullHelp() [][]key.Binding {
	n := newNavKeys()
	return [][]key.Binding{
		{k.Up, k.Down, n.Top, n.Bottom, n.PageDown, n.PageUp, k.Tab},
		{k.Filter, n.Clear, n.SortName, n.SortState, n.SortValidity, n.SortOwner, n.Vote},
		{n.Open, n.History, n.Copy, k.Acquire, k.Extend, k.Release, k.ForceExpire},
		{k.Help, k.Quit, k.Submit, k.Cancel},
	}
}
