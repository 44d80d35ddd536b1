package tui

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/quorum"
	"github.com/redlock/redlock/topology"
)

// items adds n held locks item-0..item-(n-1) under prefix, in shuffled order, each
// valid for 4m45.25s (the 285250ms).
func items(s *Snapshot, prefix string, n int) {
	for i := range n {
		j := (i * 7919) % n // a permutation: the source's order is not the screen's
		name := fmt.Sprintf("%sitem-%d", prefix, j)
		s.Locks = append(s.Locks, admin.LockInfo{
			Name: name, Key: "lock:" + name, State: admin.StateHeld, Votes: 5, Quorum: 3, Total: 5,
			Owner: &quorum.Owner{Label: "load", Host: "h"}, Library: "redlock", Validity: 285250 * time.Millisecond, ObservedAt: t0,
			Masters: mastersWith("rl1.x", 285300*time.Millisecond, 5),
		})
	}
}

// lockRows counts the table's lock rows on screen (the rows with a VOTES cell).
func lockRows(view string) int {
	n := 0
	for _, l := range strings.Split(view, "\n") {
		if strings.Contains(l, " 5/5 ") && (strings.Contains(l, "held") || strings.Contains(l, "orphaned")) && !strings.HasPrefix(l, "Lock ") {
			n++
		}
	}
	return n
}

// TestConsoleAt80x24 is the console at a normal terminal (issue 23, item 9): at
// least 12 lock rows, the nodes on a summary line when the room is short, the
// detail on demand, one human duration format, natural order.
func TestConsoleAt80x24(t *testing.T) {
	esc := tea.KeyMsg{Type: tea.KeyEsc}
	tests := []struct {
		name     string
		masters  int // 5 unless set
		keys     []tea.Msg
		wantRows int
	}{
		{name: "many-locks", wantRows: 13},
		{name: "detail-on-demand", keys: []tea.Msg{keys("j"), enter}, wantRows: 8},
		{name: "detail-closed-again", keys: []tea.Msg{enter, esc}, wantRows: 13},
		{name: "acquire-prompt", keys: []tea.Msg{keys("a")}, wantRows: 15},
		{name: "seven-masters", masters: 7, wantRows: 18},
		{name: "seven-masters-nodes-on-tab", masters: 7, keys: []tea.Msg{tab}, wantRows: 11},
		{name: "history-on-demand", keys: []tea.Msg{keys("H")}, wantRows: 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, src, _, clk := fixture(t, 80, 24, false)
			if tt.masters > 0 {
				var names []string
				nodes := healthyNodes()
				for i := len(nodes); i < tt.masters; i++ {
					n := nodes[0]
					n.Master = string(rune('a' + i))
					nodes = append(nodes, n)
				}
				for _, n := range nodes {
					names = append(names, n.Master)
				}
				m.ctx.opts.Masters = names
				src.edit(func(s *Snapshot) { s.Nodes = nodes })
			}
			src.edit(func(s *Snapshot) { s.Locks = nil; items(s, "", 30) })
			started(t, m)
			clk.Add(250 * time.Millisecond)
			drive(t, m, tickMsg{})
			for _, k := range tt.keys {
				drive(t, m, k)
			}
			view := m.View()
			golden.RequireEqual(t, []byte(view))
			lines := strings.Split(view, "\n")
			assert.LessOrEqual(t, len(lines), 24)
			for _, l := range lines {
				assert.LessOrEqual(t, ansi.StringWidth(l), 80, "line %q", l)
			}
			assert.Equal(t, tt.wantRows, lockRows(view), "lock rows on screen")
			if len(tt.keys) == 0 {
				assert.GreaterOrEqual(t, lockRows(view), 12)
				assert.Contains(t, rowOf(view, "item-0 "), "4m45s", "one human duration format")
				assert.NotContains(t, view, "285", "no raw milliseconds")
				// Natural order: item-0, item-1, item-2 ... item-9, item-10.
				assert.Less(t, strings.Index(view, "item-9 "), strings.Index(view, "item-10 "))
				assert.Less(t, strings.Index(view, "item-2 "), strings.Index(view, "item-10 "))
			}
		})
	}
}

// TestNaturalOrder: names sort as people read them, in the table and reversed.
func TestNaturalOrder(t *testing.T) {
	assert.Negative(t, naturalCompare("item-2", "item-10"))
	assert.Negative(t, naturalCompare("item-9", "item-10"))
	assert.Negative(t, naturalCompare("a/2/b", "a/10/a"))
	assert.Positive(t, naturalCompare("item-100", "item-11"))
	assert.Negative(t, naturalCompare("item", "item-1"))
	assert.NotZero(t, naturalCompare("item-01", "item-1"), "a total order")
	assert.Negative(t, naturalCompare("b", "c"))
	assert.Negative(t, naturalCompare("x99999999999999999999998", "x99999999999999999999999"), "beyond int64")

	m, src, _, _ := fixture(t, 100, 30, false)
	src.edit(func(s *Snapshot) {
		s.Locks = nil
		for _, n := range []string{"item-10", "item-1", "item-100", "item-2", "item-11"} {
			s.Locks = append(s.Locks, admin.LockInfo{Name: n, State: admin.StateHeld, Votes: 5, Total: 5, Quorum: 3, ObservedAt: t0, Validity: time.Second})
		}
	})
	started(t, m)
	var got []string
	for _, li := range m.table.rows() {
		got = append(got, li.Name)
	}
	assert.Equal(t, []string{"item-1", "item-2", "item-10", "item-11", "item-100"}, got)
	drive(t, m, keys("N")) // the name column again: descending
	got = got[:0]
	for _, li := range m.table.rows() {
		got = append(got, li.Name)
	}
	assert.Equal(t, []string{"item-100", "item-11", "item-10", "item-2", "item-1"}, got)
}

// TestFilterRule: text is a case-insensitive substring anywhere; * ? [ make a
// glob, also matched anywhere (as k9s matches), so /item-77* finds what
// /item-77 finds.
func TestFilterRule(t *testing.T) {
	tests := []struct {
		filter string
		want   int
	}{
		{"item-77", 11},  // item-77, item-770..779
		{"item-77*", 11}, // the issue: a glob matched nothing
		{"ITEM-77", 11},  // case-insensitive
		{"load/item-77", 11},
		{"item-77?", 10},     // one more character
		{"item-7[0-1]", 22},  // 70, 71, 700..719
		{"item-7[!0-8]9", 1}, // 799 only: [!0-8] is any but 0-8
		{"*/item-5", 111},    // * spans the slash
		{"item-5", 111},      // 5, 50-59, 500-599
		{"nothing*", 0},
		{"held", 1000},   // the state column
		{"load@h", 1000}, // the owner column
		{"item-[", 0},    // a malformed glob is text: no name holds "item-["
		{`item-\*`, 0},   // an escaped * is a literal
	}
	m, src, _, _ := fixture(t, 100, 30, false)
	src.edit(func(s *Snapshot) { s.Locks = nil; items(s, "load/", 1000) })
	started(t, m)
	for _, tt := range tests {
		t.Run(tt.filter, func(t *testing.T) {
			drive(t, m, keys("/"))
			typeText(t, m, tt.filter)
			drive(t, m, enter)
			assert.Len(t, m.table.rows(), tt.want)
			drive(t, m, tea.KeyMsg{Type: tea.KeyEsc})
			require.Empty(t, m.table.filter)
		})
	}
}

// TestHeldLockThatRanOutIsNotShownHeld: a lock read as held whose validity runs
// out before the next poll is shown orphaned ("validity gone", as the states are
// documented) with its validity "expired", never "held" and "expired" at once.
func TestHeldLockThatRanOutIsNotShownHeld(t *testing.T) {
	m, _, _, clk := fixture(t, 120, 40, false)
	started(t, m)
	row := rowOf(m.View(), "billing/42 ")
	assert.Contains(t, row, "● held")
	assert.Contains(t, row, "12.5s")
	clk.Add(12600 * time.Millisecond)
	drive(t, m, tickMsg{}) // no poll: the interval has not passed since the last one
	view := m.View()
	row = rowOf(view, "billing/42 ")
	assert.Contains(t, row, "expired")
	assert.Contains(t, row, "○ orphaned")
	assert.NotContains(t, row, "held")
	assert.Contains(t, view, "Lock billing/42  ○ orphaned", "the detail agrees")
}

// TestStatusLineEscapesHostileStrings (issue 23, item 10): a foreign key whose
// name carries an OSC sequence, force-expired then cancelled, or failing: no raw
// control byte reaches the status line.
func TestStatusLineEscapesHostileStrings(t *testing.T) {
	hostile := "x\x1b]0;owned\x07"
	tests := []struct {
		name   string
		answer string
		err    error
		want   string
	}{
		{"cancelled", "n", nil, `force-expire of x\x1b]0;owned\a cancelled`},
		{"error", "y", errors.New("master a: " + hostile), `force-expire x\x1b]0;owned\a: master a: x\x1b]0;owned\a`},
		{"changed hands", "y", nil, `force-expire x\x1b]0;owned\a: it changed hands`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, src, lk, _ := fixture(t, 200, 30, false)
			lk.expireErr = tt.err
			lk.changed = tt.name == "changed hands"
			src.edit(func(s *Snapshot) {
				s.Locks[0].Name, s.Locks[0].Key = hostile, "lock:"+hostile
				s.Locks[0].Owner = &quorum.Owner{Host: hostile, Label: hostile}
				s.Locks = s.Locks[:1]
			})
			started(t, m)
			drive(t, m, keys("x"))
			drive(t, m, keys(tt.answer))
			view := m.View()
			assert.NotContains(t, view, "\x1b")
			assert.NotContains(t, view, "\x07")
			assert.Contains(t, view, tt.want)
			golden.RequireEqual(t, []byte(rowOf(view, "force-expire")))
		})
	}
}

// TestHistoryNamesTheHolderItShowed (issue 23, item 16): a release or expiry
// carries no value; the history names the holder the table showed, not "unknown
// owner". And an acquire followed by nothing else is one event, not an invented
// extension (issue 23, item 1: the console shows what the source reports).
func TestHistoryNamesTheHolderItShowed(t *testing.T) {
	for _, from := range []string{"", EventsKeyspace} {
		t.Run("source="+from, func(t *testing.T) {
			m, src, _, clk := fixture(t, 140, 50, false)
			started(t, m)
			src.edit(func(s *Snapshot) {
				s.Locks = s.Locks[1:]
				s.EventSource = from
				if from != "" {
					s.Events = []Event{{At: t0, Kind: EventReleased, Name: "billing/42"}}
				}
			})
			clk.Add(2 * time.Second)
			tickPoll(t, m)
			drive(t, m, keys("H"))
			view := m.View()
			assert.Regexp(t, `(released|expired)\s+billing/42\s+ops@web-1:4242`, view)
			assert.NotContains(t, rowOf(view, "billing/42"), "unknown owner")
			assert.NotContains(t, view, "extended")
		})
	}
}

// TestNodesSummaryLine: a short terminal shows the masters on one line, with
// their state, and tab opens the rows.
func TestNodesSummaryLine(t *testing.T) {
	m, src, _, _ := fixture(t, 80, 20, false)
	src.edit(func(s *Snapshot) {
		s.Locks = nil
		items(s, "", 30)
		s.Nodes[2] = topology.NodeHealth{Master: "c", Error: "connection refused", CheckedAt: t0}
	})
	started(t, m)
	view := m.View()
	line := rowOf(view, "Nodes")
	assert.Contains(t, line, "4/5 up")
	assert.Contains(t, line, "✖ c")
	assert.GreaterOrEqual(t, lockRows(view), 12)
	drive(t, m, tab)
	assert.Contains(t, m.View(), "connection refused", "tab opens the nodes' rows")
}
