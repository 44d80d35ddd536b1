package tui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/stretchr/testify/assert"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/quorum"
)

// TestViewsGolden pins the screen of every view and of the keys that change it,
// at 120x40, from the same fixture: run with -update to accept a deliberate change.
func TestViewsGolden(t *testing.T) {
	esc := tea.KeyMsg{Type: tea.KeyEsc}
	end := tea.KeyMsg{Type: tea.KeyEnd}
	tests := []struct {
		name  string
		setup func(*Snapshot)
		keys  []tea.Msg
	}{
		{name: "help", keys: []tea.Msg{keys("?")}},
		{name: "node-detail", keys: []tea.Msg{tab, enter}},
		{name: "lock-detail-second-row", keys: []tea.Msg{keys("j")}},
		{name: "history", setup: func(s *Snapshot) { s.Locks = s.Locks[1:] }, keys: []tea.Msg{keys("H")}},
		{name: "filter-typing", keys: []tea.Msg{keys("/"), keys("o"), keys("p"), keys("s")}},
		{name: "filter-applied", keys: []tea.Msg{keys("/"), keys("redsync"), enter}},
		{name: "filter-cleared", keys: []tea.Msg{keys("/"), keys("redsync"), enter, esc}},
		{name: "sort-validity-desc", setup: func(s *Snapshot) { addMany(s, 30) }, keys: []tea.Msg{keys("V"), keys("V")}},
		{name: "end-of-long-list", setup: func(s *Snapshot) { addMany(s, 60) }, keys: []tea.Msg{end}},
		{name: "burst-jjjjj", setup: func(s *Snapshot) { addMany(s, 30) }, keys: []tea.Msg{keys("jjjjj")}},
		{name: "acquire-prompt", keys: []tea.Msg{keys("a")}},
		{name: "force-expire-confirm", keys: []tea.Msg{keys("x")}},
		{name: "incomplete-listing", setup: func(s *Snapshot) { s.Answered, s.Total = 2, 5 }},
		{name: "scanning", setup: func(s *Snapshot) {
			s.Scan = &admin.ScanProgress{Fraction: 0.37}
			s.CPU, s.Over = 90*time.Millisecond, time.Second
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, src, _, clk := fixture(t, 120, 40, false)
			started(t, m)
			if tt.setup != nil {
				src.edit(tt.setup)
				clk.Add(2 * time.Second)
				tickPoll(t, m)
			}
			for _, k := range tt.keys {
				drive(t, m, k)
			}
			view := m.View()
			golden.RequireEqual(t, []byte(view))
			lines := strings.Split(view, "\n")
			assert.LessOrEqual(t, len(lines), 40)
			for _, l := range lines {
				assert.LessOrEqual(t, ansi.StringWidth(l), 120, "line %q", l)
			}
			assert.NotContains(t, view, opsValue, "another owner's full value reached the screen")
		})
	}
}

// addMany adds n held locks with distinct validities to the fixture's snapshot.
func addMany(s *Snapshot, n int) {
	for i := range n {
		name := "svc/" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)
		s.Locks = append(s.Locks, admin.LockInfo{
			Name: name, Key: "lock:" + name, State: admin.StateHeld, Votes: 3, Quorum: 3, Total: 5,
			Owner: &quorum.Owner{Label: "w", Host: "h"}, Library: "redlock", Validity: time.Duration(i+1) * time.Second, ObservedAt: t0,
		})
	}
}
