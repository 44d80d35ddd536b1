package tui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// Getting around many locks: movement by page and to the ends, key bursts, sort
// by column, a filter over every column.

// sortKey is the column the locks are sorted by.
type sortKey int

const (
	sortName sortKey = iota
	sortState
	sortValidity
	sortOwner
	sortVotes
)

var sortNames = map[sortKey]string{sortName: "name", sortState: "state", sortValidity: "validity", sortOwner: "owner", sortVotes: "votes"}

// view is what the bottom pane shows.
type view int

const (
	viewLock    view = iota // the selected lock's detail
	viewNode                // the selected node's detail (Enter on a node)
	viewHistory             // recent lock events (H)
)

// navKeys are the movement, sort and view bindings, part of the one key map.
type navKeys struct {
	Top, Bottom, PageDown, PageUp                      key.Binding
	SortName, SortState, SortValidity, SortOwner, Vote key.Binding
	Open, History, Copy, Clear                         key.Binding
}

func newNavKeys() navKeys {
	return navKeys{
		Top:          key.NewBinding(key.WithKeys("g", "home"), key.WithHelp("g/home", "top")),
		Bottom:       key.NewBinding(key.WithKeys("G", "end"), key.WithHelp("G/end", "bottom")),
		PageDown:     key.NewBinding(key.WithKeys("pgdown", "ctrl+f", "ctrl+d"), key.WithHelp("pgdn/ctrl+f", "page down")),
		PageUp:       key.NewBinding(key.WithKeys("pgup", "ctrl+b", "ctrl+u"), key.WithHelp("pgup/ctrl+b", "page up")),
		SortName:     key.NewBinding(key.WithKeys("N"), key.WithHelp("N", "sort by name")),
		SortState:    key.NewBinding(key.WithKeys("S"), key.WithHelp("S", "sort by state")),
		SortValidity: key.NewBinding(key.WithKeys("V"), key.WithHelp("V", "sort by validity")),
		SortOwner:    key.NewBinding(key.WithKeys("O"), key.WithHelp("O", "sort by owner")),
		Vote:         key.NewBinding(key.WithKeys("C"), key.WithHelp("C", "sort by votes")),
		Open:         key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "node/lock detail")),
		History:      key.NewBinding(key.WithKeys("H"), key.WithHelp("H", "history")),
		Copy:         key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "copy own token")),
		Clear:        key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filter")),
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

// onNavKey handles the movement, sort and view keys of the normal mode; handled
// is false for any other key.
func (m *Model) onNavKey(msg tea.KeyMsg) (cmd tea.Cmd, handled bool) {
	k := m.nav
	page := max(m.table.h-3, 1)
	if m.focus == focusNodes {
		page = max(m.nodes.h-2, 1)
	}
	switch {
	case key.Matches(msg, k.Top):
		m.move(-1 << 30)
	case key.Matches(msg, k.Bottom):
		m.move(1 << 30)
	case key.Matches(msg, k.PageDown):
		m.move(page)
	case key.Matches(msg, k.PageUp):
		m.move(-page)
	case key.Matches(msg, k.SortName):
		m.sortOn(sortName)
	case key.Matches(msg, k.SortState):
		m.sortOn(sortState)
	case key.Matches(msg, k.SortValidity):
		m.sortOn(sortValidity)
	case key.Matches(msg, k.SortOwner):
		m.sortOn(sortOwner)
	case key.Matches(msg, k.Vote):
		m.sortOn(sortVotes)
	case key.Matches(msg, k.Open):
		if m.focus == focusNodes {
			m.view = toggle(m.view, viewNode)
		} else {
			m.view = viewLock
		}
	case key.Matches(msg, k.History):
		m.view = toggle(m.view, viewHistory)
	case key.Matches(msg, k.Copy):
		m.copyToken()
	case key.Matches(msg, k.Clear):
		if m.filter.Value() != "" {
			m.filter.SetValue("")
			m.setStatus(statusInfo, "filter cleared")
		} else {
			m.view = viewLock
		}
	default:
		return nil, false
	}
	return nil, true
}

func toggle(cur, v view) view {
	if cur == v {
		return viewLock
	}
	return v
}

// sortOn sorts by column k; the same column again reverses the order.
func (m *Model) sortOn(k sortKey) {
	if m.sortBy == k {
		m.sortDesc = !m.sortDesc
	} else {
		m.sortBy, m.sortDesc = k, false
	}
	dir := "ascending"
	if m.sortDesc {
		dir = "descending"
	}
	m.setStatus(statusInfo, "sorted by "+sortNames[k]+", "+dir)
}

// sortLabel is shown in the table's title: "sort: validity↓".
func (m *Model) sortLabel() string {
	arrow := "↑"
	if m.sortDesc {
		arrow = "↓"
	}
	return "sort: " + sortNames[m.sortBy] + arrow
}

// copyToken copies the token of the selected lock to the terminal's clipboard
// (OSC 52), only when this console holds it: another owner's token is a secret.
func (m *Model) copyToken() {
	li := m.selected()
	switch {
	case li == nil:
		m.setStatus(statusWarn, "no lock selected")
	case m.opts.Copy == nil:
		m.setStatus(statusWarn, "copying is not available in this terminal")
	default:
		hl, mine := m.held[li.Name]
		if !mine {
			m.setStatus(statusWarn, "only the token of a lock this console holds can be copied")
			return
		}
		if err := m.opts.Copy(hl.h.Token()); err != nil {
			m.setStatus(statusErr, "copy: "+err.Error())
			return
		}
		m.setStatus(statusOK, "copied the token of "+m.safeName(li.Name)+" to the clipboard")
	}
}
