package tui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// keyMap is the console's one key map: every component matches its keys here,
// and the help bar and the `?` screen are drawn from it.
type keyMap struct {
	// Movement (the focused panel).
	Up, Down, Top, Bottom, PageDown, PageUp key.Binding
	Tab                                     key.Binding
	// The locks table.
	Filter, Clear                                                key.Binding
	SortName, SortState, SortValidity, SortOwner, Vote, SortKind key.Binding
	// Views.
	Open, History, Copy key.Binding
	// Writing keys: disabled in a read-only console.
	Acquire, Extend, Release, ForceExpire, DeleteNow key.Binding
	Help, Quit                                       key.Binding
	// Modals: the confirmation's answers, and the prompts' and the filter's ends.
	Confirm, Deny  key.Binding
	Submit, Cancel key.Binding
	NextField      key.Binding
}

func newKeyMap(readOnly bool) keyMap {
	k := keyMap{
		Up:           key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:         key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		Top:          key.NewBinding(key.WithKeys("g", "home"), key.WithHelp("g/home", "top")),
		Bottom:       key.NewBinding(key.WithKeys("G", "end"), key.WithHelp("G/end", "bottom")),
		PageDown:     key.NewBinding(key.WithKeys("pgdown", "ctrl+f", "ctrl+d"), key.WithHelp("pgdn/ctrl+f", "page down")),
		PageUp:       key.NewBinding(key.WithKeys("pgup", "ctrl+b", "ctrl+u"), key.WithHelp("pgup/ctrl+b", "page up")),
		Tab:          key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "panel")),
		Filter:       key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		Clear:        key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filter, close pane")),
		SortName:     key.NewBinding(key.WithKeys("N"), key.WithHelp("N", "sort by name")),
		SortState:    key.NewBinding(key.WithKeys("S"), key.WithHelp("S", "sort by state")),
		SortValidity: key.NewBinding(key.WithKeys("V"), key.WithHelp("V", "sort by validity")),
		SortOwner:    key.NewBinding(key.WithKeys("O"), key.WithHelp("O", "sort by owner")),
		Vote:         key.NewBinding(key.WithKeys("C"), key.WithHelp("C", "sort by votes")),
		SortKind:     key.NewBinding(key.WithKeys("K"), key.WithHelp("K", "sort by kind")),
		Open:         key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "detail")),
		History:      key.NewBinding(key.WithKeys("H"), key.WithHelp("H", "history")),
		Copy:         key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "copy own token")),
		Acquire:      key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "acquire")),
		Extend:       key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "extend")),
		Release:      key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "release")),
		ForceExpire:  key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "force-expire")),
		DeleteNow:    key.NewBinding(key.WithKeys("D"), key.WithHelp("D", "force-expire now")),
		Help:         key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:         key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Confirm:      key.NewBinding(key.WithKeys("y", "Y"), key.WithHelp("y", "yes")),
		Deny:         key.NewBinding(key.WithKeys("n", "N", "esc"), key.WithHelp("n", "no")),
		Submit:       key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "ok")),
		Cancel:       key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
		NextField:    key.NewBinding(key.WithKeys("tab", "shift+tab", "up", "down"), key.WithHelp("tab", "next field")),
	}
	if readOnly {
		// Disabled bindings neither match nor show in the help; writingKey still
		// recognises their keys to say why nothing happens.
		for _, b := range k.writing() {
			b.SetEnabled(false)
		}
	}
	return k
}

// writing returns the writing keys' bindings.
func (k *keyMap) writing() []*key.Binding {
	return []*key.Binding{&k.Acquire, &k.Extend, &k.Release, &k.ForceExpire, &k.DeleteNow}
}

// writingKey returns the action of a writing key (enabled or not): "acquire",
// "extend", "release", "force-expire" or "force-expire now"; "" for any other key.
func (k *keyMap) writingKey(msg tea.KeyMsg) string {
	for _, b := range k.writing() {
		for _, s := range b.Keys() {
			if msg.String() == s {
				return b.Help().Desc
			}
		}
	}
	return ""
}

// ShortHelp is the help bar.
func (k keyMap) ShortHelp() []key.Binding {
	// The keys a newcomer needs first, so that a narrow terminal cuts the rest.
	return []key.Binding{k.Up, k.Open, k.Filter, k.Help, k.Quit, k.Acquire, k.Extend, k.Release, k.ForceExpire, k.Tab}
}

// FullHelp is the `?` screen, in columns: every key the console takes.
func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.Top, k.Bottom, k.PageDown, k.PageUp, k.Tab},
		{k.Filter, k.Clear, k.SortName, k.SortState, k.SortValidity, k.SortOwner, k.Vote, k.SortKind},
		{k.Open, k.History, k.Copy, k.Acquire, k.Extend, k.Release, k.ForceExpire, k.DeleteNow},
		{k.Help, k.Quit, k.Submit, k.Cancel},
	}
}

// burst splits a key message that carries several runes (keys typed faster than
// the terminal is read, as over a slow SSH link) into one press per rune.
func burst(msg tea.KeyMsg) []tea.KeyMsg {
	if msg.Type != tea.KeyRunes || len(msg.Runes) <= 1 || msg.Paste {
		return []tea.KeyMsg{msg}
	}
	out := make([]tea.KeyMsg, len(msg.Runes))
	for i, r := range msg.Runes {
		out[i] = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt}
	}
	return out
}
