package tui

import (
	"context"
	"slices"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/quorum"
)

// tickMsg is the app-level frame tick: it redraws countdowns and schedules polls.
type tickMsg struct{}

// snapshotMsg is the answer to poll request id, prepared off the UI goroutine.
// Answers to older requests are dropped.
type snapshotMsg struct {
	id   int
	snap Snapshot
	prep *prepared
}

// tickCmd schedules the next frame.
func (m *Model) tickCmd() tea.Cmd {
	if m.manualTick {
		return nil
	}
	return tea.Tick(m.opts.Frame, func(time.Time) tea.Msg { return tickMsg{} })
}

// startPoll issues a new poll request; any answer still in flight becomes stale.
// The command polls the source for the rows on screen, then prepares the answer
// (sorting, countdown spans, events, the rows for the sort and filter in force)
// so that applying it costs the UI goroutine almost nothing at 100,000 locks.
func (m *Model) startPoll() tea.Cmd {
	if m.src == nil {
		return nil
	}
	m.pollID++
	id := m.pollID
	m.inflight = true
	m.pollAt = m.now
	m.nextPoll = m.now.Add(m.opts.Interval)
	src, timeout := m.src, m.pollTimeout()
	// Everything the command reads is copied or immutable: a snapshot's locks and
	// the span map are replaced by every poll, never changed in place.
	base := prepBase{locks: m.snap.Locks, spans: m.span, first: !m.polled, key: m.listKey()}
	visible := m.onScreen()
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		snap := src.Poll(ctx, visible)
		return snapshotMsg{id: id, snap: snap, prep: base.prepare(snap)}
	}
}

// pollTimeout bounds one poll: a hung poll is abandoned (its answer will be stale)
// and a new one issued.
func (m *Model) pollTimeout() time.Duration {
	return max(3*m.opts.Interval, 2*time.Second)
}

// duePoll reports whether the tick should issue a poll now.
func (m *Model) duePoll() bool {
	if m.src == nil || m.now.Before(m.nextPoll) {
		return false
	}
	return !m.inflight || m.now.Sub(m.pollAt) > m.pollTimeout()
}

// applySnapshot takes a poll answer, or drops it when a newer request was issued.
func (m *Model) applySnapshot(msg snapshotMsg) {
	if msg.id != m.pollID {
		m.dropped++
		// The source reported these events once (drained at its poll): keep them.
		// Differences the console computes itself are recomputed by the next answer.
		if p := msg.prep; p != nil && p.snap.EventSource != "" {
			m.history = appendHistory(m.history, p.events)
		}
		return
	}
	m.inflight = false
	// The selected row's place: if its lock is gone from the new answer, the row
	// that takes its place is selected, so the table does not jump to the top.
	place := -1
	if m.polled && m.lockSel != "" {
		place = slices.IndexFunc(m.visibleLocks(), func(li quorum.LockInfo) bool { return li.Name == m.lockSel })
	}
	p := msg.prep
	if p == nil { // built by hand (tests)
		p = prepBase{locks: m.snap.Locks, spans: m.span, first: !m.polled, key: m.listKey()}.prepare(msg.snap)
	}
	m.snap = p.snap
	m.span = p.spans
	m.snapGen++
	m.polled = true
	m.record(p)
	if p.key == m.listKey() {
		m.visible = visibleCache{gen: m.snapGen, key: p.key, locks: p.rows, valid: true}
	}
	if rows := m.visibleLocks(); place >= 0 && len(rows) > 0 && !slices.ContainsFunc(rows, func(li quorum.LockInfo) bool { return li.Name == m.lockSel }) {
		m.lockSel = rows[clamp(place, 0, len(rows)-1)].Name
	}
	if err := m.snap.Err; err != nil {
		m.pollErr = escape.Text(err.Error())
		if m.status.text == "" || m.status.fromPoll {
			m.status = status{kind: statusErr, text: "poll: " + m.pollErr, fromPoll: true}
		}
	} else if m.pollErr != "" {
		m.pollErr = ""
		if m.status.fromPoll {
			m.status = status{}
		}
	}
}
