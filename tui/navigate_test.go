package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/quorum"
)

// manyLocks replaces the fixture's locks with n locks job/000.. of alternating
// owners and growing validity.
func manyLocks(src *fakeSource, n int) {
	src.edit(func(s *Snapshot) {
		s.Locks = nil
		for i := range n {
			owner := "alice"
			if i%2 == 1 {
				owner = "bob"
			}
			s.Locks = append(s.Locks, admin.LockInfo{
				Name: fmt.Sprintf("job/%03d", i), Key: fmt.Sprintf("lock:job/%03d", i), State: admin.StateHeld, Votes: 5, Quorum: 3, Total: 5,
				Owner: &quorum.Owner{Label: owner, Host: "h"}, Library: "redlock", Validity: time.Duration(i+1) * time.Second, ObservedAt: t0,
			})
		}
	})
}

func TestMovementKeys(t *testing.T) {
	m, src, _, _ := fixture(t, 100, 30, false)
	manyLocks(src, 100)
	started(t, m)
	tests := []struct {
		keys []tea.KeyMsg
		want string
	}{
		{[]tea.KeyMsg{keys("G")}, "job/099"},
		{[]tea.KeyMsg{keys("g")}, "job/000"},
		{[]tea.KeyMsg{{Type: tea.KeyEnd}}, "job/099"},
		{[]tea.KeyMsg{{Type: tea.KeyHome}}, "job/000"},
		{[]tea.KeyMsg{keys("jjjjj")}, "job/005"}, // a burst of five presses in one read
		{[]tea.KeyMsg{keys("kk")}, "job/003"},
		{[]tea.KeyMsg{{Type: tea.KeyPgDown}}, ""},
		{[]tea.KeyMsg{{Type: tea.KeyCtrlB}}, "job/003"},
	}
	for i, tt := range tests {
		before := m.table.sel
		for _, k := range tt.keys {
			drive(t, m, k)
		}
		if tt.want == "" {
			assert.Greater(t, m.table.sel, before, "step %d: a page down moves more than one row", i)
			continue
		}
		assert.Equal(t, tt.want, m.table.sel, "step %d", i)
	}
}

func TestSortAndFilterEveryColumn(t *testing.T) {
	m, src, _, _ := fixture(t, 100, 30, false)
	manyLocks(src, 10)
	started(t, m)
	drive(t, m, keys("V")) // validity ascending: job/000 first
	assert.Equal(t, "job/000", m.table.rows()[0].Name)
	drive(t, m, keys("V")) // again: descending
	assert.Equal(t, "job/009", m.table.rows()[0].Name)
	assert.Contains(t, m.View(), "sort: validity↓")
	drive(t, m, keys("N"))
	assert.Equal(t, "job/000", m.table.rows()[0].Name)

	// The filter matches the owner column too.
	drive(t, m, keys("/"))
	drive(t, m, keys("bob"))
	drive(t, m, enter)
	assert.Len(t, m.table.rows(), 5)
	for _, li := range m.table.rows() {
		assert.Equal(t, "bob", li.Owner.Label)
	}
	// Esc clears an applied filter.
	drive(t, m, tea.KeyMsg{Type: tea.KeyEsc})
	assert.Len(t, m.table.rows(), 10)
	assert.Empty(t, m.table.filter)
}

func TestNodeDetailAndHistory(t *testing.T) {
	m, src, _, clk := fixture(t, 140, 50, false)
	started(t, m)
	drive(t, m, tab) // the nodes panel
	drive(t, m, enter)
	view := m.View()
	assert.Contains(t, view, "Master a")
	assert.Contains(t, view, "latency ")
	assert.Contains(t, view, "clock offset")
	drive(t, m, enter)
	assert.NotContains(t, m.View(), "Master a", "enter closes the node detail")

	// A lock that goes away between two polls is in the history.
	src.edit(func(s *Snapshot) { s.Locks = s.Locks[1:] })
	clk.Add(2 * time.Second)
	tickPoll(t, m)
	drive(t, m, keys("H"))
	view = m.View()
	assert.Contains(t, view, "History")
	assert.Regexp(t, `(released|expired)\s+billing/42`, view)
	drive(t, m, keys("H"))

	// It comes back: the lock's detail shows its recent events.
	src.edit(func(s *Snapshot) { s.Locks = sampleLocks() })
	clk.Add(2 * time.Second)
	tickPoll(t, m)
	drive(t, m, keys("g"))
	assert.Regexp(t, `recent: \S+ acquired ops@web-1:4242 · \S+ (released|expired)`, m.View())
}

// tickPoll advances the console past its poll interval and runs the poll.
func tickPoll(t *testing.T, m *Model) {
	t.Helper()
	m.poll.next = time.Time{}
	drive(t, m, tickMsg{})
}

func TestIncompleteListingBanner(t *testing.T) {
	m, src, _, _ := fixture(t, 140, 30, false)
	src.edit(func(s *Snapshot) { s.Answered, s.Total = 1, 5 })
	started(t, m)
	assert.Contains(t, m.View(), "listing incomplete: 1 of 5 masters answered")
	src.edit(func(s *Snapshot) { s.Answered = 5 })
	tickPoll(t, m)
	assert.NotContains(t, m.View(), "listing incomplete")
}

func TestCopyOnlyOwnToken(t *testing.T) {
	m, src, _, _ := fixture(t, 120, 30, false)
	var copied []string
	m.ctx.opts.Copy = func(s string) error { copied = append(copied, s); return nil }
	started(t, m)
	drive(t, m, keys("y")) // billing/42 is another owner's
	assert.Empty(t, copied)
	assert.Contains(t, m.View(), "only the token of a lock this console holds")

	drive(t, m, keys("a"))
	drive(t, m, keys("mine"))
	drive(t, m, enter)
	require.Contains(t, m.hold.held, "mine")
	src.edit(func(s *Snapshot) {
		s.Locks = append(s.Locks, admin.LockInfo{Name: "mine", State: admin.StateHeld, Votes: 5, Quorum: 3, Total: 5, ObservedAt: t0})
	})
	tickPoll(t, m)
	drive(t, m, keys("gj")) // billing/42, mine, reports/daily
	require.Equal(t, "mine", m.table.sel)
	drive(t, m, keys("y"))
	assert.Equal(t, []string{"rl1.mine"}, copied)
	assert.NotContains(t, m.View(), "rl1.mine", "the token is never on screen")
}

func TestHelpListsEveryKey(t *testing.T) {
	m, _, _, _ := fixture(t, 160, 40, false)
	started(t, m)
	drive(t, m, keys("?"))
	view := m.View()
	for _, k := range []string{"↑/k", "↓/j", "G/end", "g/home", "pgdn", "pgup", "N", "S", "V", "O", "C", "enter", "H", "y", "esc", "/", "a", "e", "r", "x", "q"} {
		assert.True(t, strings.Contains(view, k), "help shows %q", k)
	}
}
