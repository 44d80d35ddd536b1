package tui

import (
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/quorum"
	"github.com/redlock/redlock/topology"
)

func TestMain(m *testing.M) {
	lipgloss.SetColorProfile(termenv.Ascii)
	os.Exit(m.Run())
}

// rowOf returns the screen line that contains s.
func rowOf(view, s string) string {
	for _, l := range strings.Split(view, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

func TestInitialScreenGolden(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			m, _, _, _ := fixture(t, size[0], size[1], false)
			tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(size[0], size[1]))
			teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return strings.Contains(string(b), "reports/daily") },
				teatest.WithDuration(5*time.Second))
			require.NoError(t, tm.Quit())
			fm := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
			view := fm.View()
			golden.RequireEqual(t, []byte(view))
			lines := strings.Split(view, "\n")
			assert.LessOrEqual(t, len(lines), size[1])
			for _, l := range lines {
				assert.LessOrEqual(t, ansi.StringWidth(l), size[0], "line %q", l)
			}
			assert.NotContains(t, view, opsValue, "another owner's full value reached the screen")
		})
	}
}

func TestAcquireThroughPrompt(t *testing.T) {
	m, _, lk, _ := fixture(t, 100, 30, false)
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return strings.Contains(string(b), "billing/42") }, teatest.WithDuration(5*time.Second))
	tm.Send(keys("a"))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return strings.Contains(string(b), "Acquire") }, teatest.WithDuration(5*time.Second))
	for range len("billing/42") {
		tm.Send(bksp)
	}
	tm.Type("orders/7")
	tm.Send(tab)
	for range len("30s") {
		tm.Send(bksp)
	}
	tm.Type("10s")
	tm.Send(enter)
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return strings.Contains(string(b), "acquired orders/7") },
		teatest.WithDuration(5*time.Second))
	require.NoError(t, tm.Quit())
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
	acq, _ := lk.calls()
	assert.Equal(t, []string{"orders/7"}, acq)
	assert.Equal(t, []time.Duration{10 * time.Second}, lk.ttls)
	assert.Contains(t, fm.View(), "5/5 votes (quorum 3)")
	require.Len(t, fm.Holding(), 1)
}

func TestAcquirePromptValidates(t *testing.T) {
	tests := []struct {
		name, lock, ttl, want string
	}{
		{"empty name", "", "10s", "enter a lock name"},
		{"space in name", "a b", "10s", "space"},
		{"bad ttl", "x", "ten", "not a duration"},
		{"zero ttl", "x", "0s", "at least 1ms"},
		{"ttl above max", "x", "1h", "above the cluster's max_ttl 5m0s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, _, lk, _ := fixture(t, 80, 24, false)
			drive(t, m, keys("a"))
			requireModal[*acquirePrompt](t, m)
			typeText(t, m, tc.lock)
			drive(t, m, tab)
			for range 3 {
				drive(t, m, bksp)
			}
			typeText(t, m, tc.ttl)
			drive(t, m, enter)
			requireModal[*acquirePrompt](t, m)
			assert.Contains(t, m.View(), tc.want)
			acq, _ := lk.calls()
			assert.Empty(t, acq, "nothing sent for invalid input")
		})
	}
}

func TestAcquireErrorInStatusLine(t *testing.T) {
	m, _, lk, _ := fixture(t, 200, 24, false)
	started(t, m)
	lk.acquireErr = &quorum.NodeError{Node: "c", Op: "acquire", Err: errBoom}
	drive(t, m, keys("a"))
	typeText(t, m, "billing/42")
	drive(t, m, enter) // with the proposed 30s
	assert.Nil(t, m.top())
	assert.Contains(t, rowOf(m.View(), "✖"), "acquire billing/42: master c: acquire: boom")
}

func TestForceExpire(t *testing.T) {
	tests := []struct {
		name        string
		key, answer string
		prompt      string
		wantCalls   [][2]string
		wantRevokes int
		wantState   string
	}{
		{"x revokes, confirmed with y", "x", "y", "Revoke billing/42 held by ops@web-1:4242? y/n", [][2]string{{"billing/42", opsValue}}, 1,
			"revoked billing/42 on 5/5 masters: its holder is told to stop; taken until"},
		{"x refused with n", "x", "n", "Revoke billing/42 held by ops@web-1:4242? y/n", nil, 0, "force-expire of billing/42 cancelled"},
		{"D deletes now, confirmed with y", "D", "y", "Delete billing/42 held by ops@web-1:4242 now? y/n", [][2]string{{"billing/42", opsValue}}, 0,
			"force-expired billing/42: deleted on 5/5 masters"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, _, lk, _ := fixture(t, 100, 30, false)
			started(t, m)
			drive(t, m, keys(tc.key))
			requireModal[*confirmModal](t, m)
			assert.Contains(t, m.View(), tc.prompt)
			drive(t, m, keys(tc.answer))
			assert.Nil(t, m.top())
			_, exp := lk.calls()
			assert.Equal(t, tc.wantCalls, exp)
			assert.Equal(t, tc.wantRevokes, lk.revokes)
			assert.Contains(t, m.View(), tc.wantState)
		})
	}
}

func TestForceExpireWithAMasterDownNamesIt(t *testing.T) {
	m, _, lk, _ := fixture(t, 160, 30, false)
	lk.expireDown = "c"
	started(t, m)
	drive(t, m, keys("x"))
	drive(t, m, keys("y"))
	assert.Contains(t, m.View(), "force-expired billing/42: revoked on 4/5 masters; master c: boom")
}

// A master the row could not read is not "missing": nothing was deleted there and it
// may still hold the lock, which the status line says.
func TestForceExpireSaysWhatWasNotRead(t *testing.T) {
	m, src, _, _ := fixture(t, 200, 30, false)
	src.edit(func(s *Snapshot) {
		s.Locks[0].Masters = append([]admin.MasterView(nil), s.Locks[0].Masters...)
		s.Locks[0].Masters[2] = admin.MasterView{Master: "c", Err: errBoom}
	})
	started(t, m)
	drive(t, m, keys("x"))
	drive(t, m, keys("y"))
	view := m.View()
	assert.Contains(t, view, "force-expired billing/42: revoked on 4/5 masters; master c: not read, so nothing deleted there (boom)")
	assert.Equal(t, statusWarn, m.status.kind)
}

// A contested lock (several values) is force-expired value by value: each master
// only where it still holds what the row showed there.
func TestForceExpireContestedDeletesOnlyWhatWasShown(t *testing.T) {
	m, src, lk, _ := fixture(t, 100, 30, false)
	src.edit(func(s *Snapshot) {
		s.Locks[0].State = admin.StateContested
		s.Locks[0].Masters[1].Value = "rl1.other"
	})
	started(t, m)
	drive(t, m, keys("x"))
	drive(t, m, keys("y"))
	require.Len(t, lk.seens, 1)
	seen := lk.seens[0]
	assert.Equal(t, "rl1.other", seen[src.snap.Locks[0].Masters[1].Master].Value)
	assert.Equal(t, opsValue, seen[src.snap.Locks[0].Masters[0].Master].Value)
}

// The lock changed hands between the confirmation and the delete: a warning that
// names the new holder, not a green "force-expired".
func TestForceExpireOfALockThatChangedHandsWarns(t *testing.T) {
	m, src, lk, _ := fixture(t, 200, 30, false)
	lk.changed = true
	started(t, m)
	drive(t, m, keys("x"))
	src.edit(func(s *Snapshot) {
		o := *s.Locks[0].Owner
		o.Label, o.Host = "bob", "laptop"
		s.Locks[0].Owner = &o
	})
	drive(t, m, keys("y"))
	view := m.View()
	assert.NotContains(t, view, "force-expired billing/42")
	assert.Contains(t, view, "force-expire billing/42: it changed hands since you confirmed; now held by bob@laptop")
	assert.Equal(t, statusWarn, m.status.kind)
}

func TestReadOnly(t *testing.T) {
	m, _, _, _ := fixture(t, 120, 30, true)
	started(t, m)
	for _, k := range []string{"x", "a", "e", "r"} {
		drive(t, m, keys(k))
		assert.Nil(t, m.top(), "key %s", k)
		assert.Contains(t, rowOf(m.View(), "read-only console"), map[string]string{"a": "acquire", "e": "extend", "r": "release", "x": "force-expire"}[k])
	}
	help := rowOf(m.View(), "quit")
	assert.NotContains(t, help, "force-expire")
	assert.NotContains(t, help, "acquire")
}

func TestExtendAndReleaseOnlyOwnLocks(t *testing.T) {
	m, src, lk, clk := fixture(t, 120, 30, false)
	started(t, m)
	drive(t, m, keys("e"))
	assert.Contains(t, m.View(), "billing/42 is not held by this console")
	drive(t, m, keys("r"))
	assert.Contains(t, m.View(), "billing/42 is not held by this console")

	drive(t, m, keys("a"))
	for range len("billing/42") {
		drive(t, m, bksp)
	}
	typeText(t, m, "mine/1")
	drive(t, m, enter)
	require.Len(t, lk.held, 1)
	h := lk.held[0]
	assert.Equal(t, "mine/1", m.table.sel, "the new lock is selected")
	// The lock shows up in the next poll; select it and extend, then release.
	src.edit(func(s *Snapshot) {
		s.Locks = append(s.Locks, admin.LockInfo{Name: "mine/1", State: admin.StateHeld, Votes: 5, Total: 5, Quorum: 3, ObservedAt: clk.Now(), Validity: 29 * time.Second})
	})
	runCmd(t, m, m.startPoll())
	assert.Contains(t, rowOf(m.View(), "mine/1 "), "this console")
	drive(t, m, keys("e"))
	assert.Equal(t, 1, h.extends)
	assert.Contains(t, m.View(), "extended mine/1")
	drive(t, m, keys("r"))
	assert.Equal(t, 1, h.Released())
	assert.Contains(t, m.View(), "released mine/1")
	assert.Empty(t, m.Holding())
}

func TestQuitReleasesHeldLocks(t *testing.T) {
	m, _, lk, _ := fixture(t, 80, 24, false)
	started(t, m)
	drive(t, m, keys("a"))
	typeText(t, m, "mine/2")
	drive(t, m, enter)
	require.Len(t, lk.held, 1)
	assert.True(t, drive(t, m, keys("q")), "q quits")
	assert.Equal(t, 1, lk.held[0].Released())
	assert.Empty(t, m.Holding())
}

func TestNodeGoingDownChangesItsRowWithinOneInterval(t *testing.T) {
	m, src, _, clk := fixture(t, 120, 30, false)
	started(t, m)
	assert.Contains(t, rowOf(m.View(), " c  "), "● up")
	src.edit(func(s *Snapshot) {
		s.Nodes[2] = topology.NodeHealth{Master: "c", Address: s.Nodes[2].Address, Error: "connection refused", CheckedAt: t0}
	})
	clk.Add(500 * time.Millisecond)
	drive(t, m, tickMsg{})
	assert.Contains(t, rowOf(m.View(), " c  "), "● up", "no poll before the interval")
	clk.Add(500 * time.Millisecond)
	drive(t, m, tickMsg{})
	row := rowOf(m.View(), " c  ")
	assert.Contains(t, row, "✖ down")
	assert.Contains(t, row, "connection refused")
	assert.Contains(t, m.View(), "healthy 4/5")
	// And back up.
	src.edit(func(s *Snapshot) { s.Nodes[2] = healthyNodes()[2] })
	clk.Add(time.Second)
	drive(t, m, tickMsg{})
	assert.Contains(t, rowOf(m.View(), " c  "), "● up")
}

func TestQuarantineCountdown(t *testing.T) {
	m, src, _, _ := fixture(t, 120, 30, false)
	src.edit(func(s *Snapshot) { s.Nodes[1].QuarantineUntil = t0.Add(90 * time.Second) })
	started(t, m)
	row := rowOf(m.View(), " b  ")
	assert.Contains(t, row, "◐ quarantined")
	assert.Contains(t, row, "quarantine 1m30s")
}

// remainingOf returns the remaining milliseconds shown on a lock's row.
func remainingOf(t *testing.T, view, name string) int {
	t.Helper()
	row := rowOf(view, name+" ")
	f := strings.Fields(row)
	require.NotEmpty(t, f, "row %q", row)
	d, err := time.ParseDuration(f[len(f)-1])
	require.NoError(t, err, "row %q", row)
	return int(d.Milliseconds())
}

func TestCountdownDecreasesBetweenTicks(t *testing.T) {
	m, src, _, clk := fixture(t, 120, 30, false)
	started(t, m)
	polls := src.polls
	first := remainingOf(t, m.View(), "billing/42")
	assert.Equal(t, 12500, first)
	clk.Add(300 * time.Millisecond)
	drive(t, m, tickMsg{})
	second := remainingOf(t, m.View(), "billing/42")
	assert.Equal(t, 12200, second)
	assert.Equal(t, polls, src.polls, "the countdown runs from the last poll, without polling")
	clk.Add(13 * time.Second)
	drive(t, m, tickMsg{})
	src.edit(func(s *Snapshot) {}) // the fake keeps the old observation time
	assert.Contains(t, rowOf(m.View(), "billing/42 "), "expired")
}

func TestStalePollAnswerIsDropped(t *testing.T) {
	m, src, _, _ := fixture(t, 100, 30, false)
	started(t, m)
	old := m.startPoll()
	stale := old().(snapshotMsg)
	src.edit(func(s *Snapshot) { s.Locks = s.Locks[:1] })
	fresh := m.startPoll()().(snapshotMsg)
	drive(t, m, fresh)
	drive(t, m, stale)
	assert.NotContains(t, m.View(), "reports/daily", "the stale answer did not overwrite the fresh one")
}

func TestFilter(t *testing.T) {
	m, _, _, _ := fixture(t, 100, 30, false)
	started(t, m)
	drive(t, m, keys("/"))
	typeText(t, m, "report")
	drive(t, m, enter)
	v := m.View()
	assert.NotContains(t, v, "billing/42")
	assert.Contains(t, v, "reports/daily")
	drive(t, m, keys("/"))
	drive(t, m, tea.KeyMsg{Type: tea.KeyEsc})
	assert.Contains(t, m.View(), "billing/42")
}

func TestNavigationAndHelp(t *testing.T) {
	m, _, _, _ := fixture(t, 100, 30, false)
	started(t, m)
	drive(t, m, down)
	assert.Equal(t, "reports/daily", m.table.sel)
	assert.Contains(t, m.View(), "Lock reports/daily")
	drive(t, m, tab)
	drive(t, m, down)
	assert.Equal(t, 1, m.nodes.cur)
	drive(t, m, keys("?"))
	assert.Contains(t, m.View(), "force-expire")
	assert.Contains(t, m.View(), "press any key to return")
	drive(t, m, keys("j"))
	assert.Nil(t, m.top())
}

func TestAnySizeRendersWithinBounds(t *testing.T) {
	sizes := [][2]int{{0, 0}, {1, 1}, {10, 5}, {20, 3}, {40, 10}, {80, 24}, {120, 40}, {250, 80}}
	for _, s := range sizes {
		t.Run(fmt.Sprintf("%dx%d", s[0], s[1]), func(t *testing.T) {
			m, _, _, _ := fixture(t, 80, 24, false)
			started(t, m)
			for _, md := range []string{"", "a", "x"} {
				if md != "" {
					drive(t, m, keys(md))
				}
				drive(t, m, tea.WindowSizeMsg{Width: s[0], Height: s[1]})
				var view string
				require.NotPanics(t, func() { view = m.View() })
				if s[0] == 0 || s[1] == 0 {
					assert.Empty(t, view)
					continue
				}
				lines := strings.Split(view, "\n")
				assert.LessOrEqual(t, len(lines), s[1])
				for _, l := range lines {
					assert.LessOrEqual(t, ansi.StringWidth(l), s[0], "line %q", l)
				}
				drive(t, m, tea.KeyMsg{Type: tea.KeyEsc})
			}
		})
	}
}

func TestResizeUsesTheRoom(t *testing.T) {
	m, src, _, _ := fixture(t, 80, 24, false)
	src.edit(func(s *Snapshot) {
		for i := range 30 {
			s.Locks = append(s.Locks, admin.LockInfo{Name: fmt.Sprintf("job/%02d", i), State: admin.StateHeld, Votes: 3, Total: 5, Quorum: 3, ObservedAt: t0, Validity: time.Second})
		}
	})
	started(t, m)
	small := strings.Count(m.View(), "job/")
	drive(t, m, tea.WindowSizeMsg{Width: 120, Height: 40})
	big := strings.Count(m.View(), "job/")
	assert.Greater(t, big, small)
	assert.Contains(t, m.View(), "7.0.15", "wide screens show the version")
}

func TestNoColorStillReads(t *testing.T) {
	// Colours are off in these tests (Ascii profile): states must read by glyph and word.
	m, src, _, _ := fixture(t, 120, 30, false)
	src.edit(func(s *Snapshot) { s.Nodes[4] = topology.NodeHealth{Master: "e", Error: "i/o timeout", CheckedAt: t0} })
	started(t, m)
	v := m.View()
	assert.NotContains(t, v, "\x1b[")
	for _, want := range []string{"● up", "✖ down", "● held", "◐ partial"} {
		assert.Contains(t, v, want)
	}
	_ = io.Discard
}
