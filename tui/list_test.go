package tui

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/quorum"
)

// TestPollAsksForTheRowsOnScreen: every poll names the locks the table shows, so a
// source with an incremental listing refreshes exactly those.
func TestPollAsksForTheRowsOnScreen(t *testing.T) {
	m, src, _, _ := fixture(t, 120, 30, false)
	manyLocks(src, 500)
	started(t, m)
	tickPoll(t, m)
	src.mu.Lock()
	first := src.visible
	src.mu.Unlock()
	require.NotEmpty(t, first)
	assert.Equal(t, "job/000", first[0])
	assert.LessOrEqual(t, len(first), 2*m.table.rowsH(), "only the rows on screen and a page below")

	drive(t, m, keys("G"))
	tickPoll(t, m)
	src.mu.Lock()
	last := src.visible
	src.mu.Unlock()
	require.NotEmpty(t, last)
	assert.Equal(t, "job/499", last[len(last)-1])
	assert.Contains(t, m.View(), "job/499")
}

// TestScanProgressAndCPUInTheTitle: an incremental listing that has not finished a
// pass says so, and the poll's CPU share is shown.
func TestScanProgressAndCPUInTheTitle(t *testing.T) {
	m, src, _, _ := fixture(t, 160, 30, false)
	src.edit(func(s *Snapshot) {
		s.Scan = &admin.ScanProgress{Fraction: 0.42}
		s.CPU, s.Over = 120*time.Millisecond, time.Second
	})
	started(t, m)
	view := m.View()
	assert.Contains(t, view, "scanning 42%")
	assert.Contains(t, view, "cpu 12%")

	src.edit(func(s *Snapshot) { s.Scan = &admin.ScanProgress{Passes: 1, Complete: true, Fraction: 0.1} })
	tickPoll(t, m)
	assert.NotContains(t, m.View(), "scanning")
}

// TestHistoryFromTheSourcesEvents: events the source reports (keyspace
// notifications) go to the history as they are, including locks held for less
// than an interval, and the console does not add its own differences.
func TestHistoryFromTheSourcesEvents(t *testing.T) {
	m, src, _, clk := fixture(t, 140, 50, false)
	started(t, m)
	src.edit(func(s *Snapshot) {
		s.Locks = s.Locks[1:] // would be a "released" difference
		s.EventSource = EventsKeyspace
		s.Events = []Event{
			{At: t0, Kind: EventAcquired, Name: "blink", Owner: &quorum.Owner{Label: "cron", Host: "h1"}},
			{At: t0, Kind: EventReleased, Name: "blink", Owner: &quorum.Owner{Label: "cron", Host: "h1"}},
		}
	})
	clk.Add(2 * time.Second)
	tickPoll(t, m)
	drive(t, m, keys("H"))
	view := m.View()
	assert.Regexp(t, `acquired\s+blink\s+cron@h1`, view)
	assert.Regexp(t, `released\s+blink`, view)
	assert.NotContains(t, view, "billing/42", "no difference of its own when the source reports events")
}

// TestPreparedRowsFollowTheKeyInForce: a poll answer prepared for one sort, which
// arrives after the operator chose another, is shown in the order chosen.
func TestPreparedRowsFollowTheKeyInForce(t *testing.T) {
	m, src, _, _ := fixture(t, 120, 30, false)
	manyLocks(src, 20)
	started(t, m)
	cmd := m.startPoll() // prepared sorted by name
	drive(t, m, keys("V"))
	drive(t, m, keys("V")) // validity, descending
	msg := cmd().(snapshotMsg)
	m.onSnapshot(msg)
	rows := m.table.rows()
	require.Len(t, rows, 20)
	assert.Equal(t, "job/019", rows[0].Name, "the longest validity first")
}

// TestApplyingAHugeAnswerIsCheap guards what BenchmarkApplySnapshot100k measures:
// the work of a 100,000-lock answer is done in the poll's command, so applying it
// on the UI goroutine copies no rows.
func TestApplyingAHugeAnswerIsCheap(t *testing.T) {
	m, src, _, _ := fixture(t, 120, 30, false)
	manyLocks(src, 100000)
	started(t, m)
	msg := m.startPoll()().(snapshotMsg)
	require.NotNil(t, msg.prep)
	m.onSnapshot(msg)
	assert.False(t, m.table.stale(), "the rows came prepared")
	assert.Equal(t, fmt.Sprintf("%p", msg.prep.rows), fmt.Sprintf("%p", m.table.rows()))
}

// TestSelectionStaysInPlaceWhenItsLockGoes: when the selected lock is gone from a
// poll, the row that takes its place is selected (the table does not jump to the
// top, nor back when a stale listing shows the lock again).
func TestSelectionStaysInPlaceWhenItsLockGoes(t *testing.T) {
	m, src, _, _ := fixture(t, 120, 30, false)
	manyLocks(src, 200)
	started(t, m)
	drive(t, m, keys("G"))
	drive(t, m, keys("k"))
	require.Equal(t, "job/198", m.table.sel)
	src.edit(func(s *Snapshot) { s.Locks = append(s.Locks[:198:198], s.Locks[199]) })
	tickPoll(t, m)
	assert.Equal(t, "job/199", m.table.sel, "the next row took the selected one's place")
	src.edit(func(s *Snapshot) { s.Locks = s.Locks[:150] })
	tickPoll(t, m)
	assert.Equal(t, "job/149", m.table.sel, "the last row when the list got shorter")
}

// TestSortingALargeListingRunsInACommand: on a listing too large to sort in a
// frame, a sort key leaves the rows as they were (the title says they are being
// sorted) and returns the command that sorts them; its answer shows them, the
// selection still on its lock. So does a filter. A small listing is sorted at
// once.
func TestSortingALargeListingRunsInACommand(t *testing.T) {
	m, src, _, _ := fixture(t, 120, 30, false)
	manyLocks(src, 3*inlineRows)
	started(t, m)
	drive(t, m, keys("j"))
	require.Equal(t, "job/001", m.table.sel)

	_, cmd := m.Update(keys("V"))
	require.NotNil(t, cmd, "the rows are sorted in a command")
	view := m.View()
	assert.Contains(t, view, "sort: validity↑ (sorting…)")
	assert.Equal(t, "job/000", m.table.rows()[0].Name, "the rows shown meanwhile are the previous ones")
	assert.False(t, runCmd(t, m, cmd))
	assert.NotContains(t, m.View(), "sorting…")
	rows := m.table.rows()
	assert.Equal(t, "job/000", rows[0].Name, "the shortest validity first")
	assert.Equal(t, "job/001", m.table.selected().Name)

	_, cmd = m.Update(keys("V"))
	require.NotNil(t, cmd)
	// A poll's answer that comes before the rows does not stop them.
	tickPoll(t, m)
	assert.False(t, runCmd(t, m, cmd))
	assert.Equal(t, fmt.Sprintf("job/%03d", 3*inlineRows-1), m.table.rows()[0].Name, "the longest validity first")
	assert.Contains(t, m.View(), "sort: validity↓")
	assert.NotContains(t, m.View(), "sorting…")

	// A filter too, typed key by key: one command at a time computes rows, the
	// next one, for the filter then in force, started when its answer comes.
	drive(t, m, keys("/"))
	_, cmd = m.Update(keys("b"))
	require.NotNil(t, cmd)
	assert.Contains(t, m.View(), "(filtering…)")
	_, again := m.Update(keys("ob"))
	assert.Nil(t, again, "one command at a time")
	_, next := m.Update(cmd())
	require.NotNil(t, next, "the rows for the filter now in force")
	assert.Contains(t, m.View(), "(filtering…)")
	assert.False(t, runCmd(t, m, next))
	assert.Contains(t, m.View(), fmt.Sprintf("%d of %d matching", 3*inlineRows/2, 3*inlineRows))
	assert.NotContains(t, m.View(), "filtering…")

	m, src, _, _ = fixture(t, 120, 30, false)
	manyLocks(src, inlineRows)
	started(t, m)
	_, cmd = m.Update(keys("V"))
	assert.Nil(t, cmd, "a small listing is sorted at once")
	assert.NotContains(t, m.View(), "sorting…")
}
