package tui

import (
	"context"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/redlock/redlock/internal/escape"
)

// tickMsg is the app-level frame tick: it redraws countdowns and schedules polls.
type tickMsg struct{}

// snapshotMsg is the answer to poll request id. Answers to older requests are dropped.
type snapshotMsg struct {
	id   int
	snap Snapshot
}

// tickCmd schedules the next frame.
func (m *Model) tickCmd() tea.Cmd {
	if m.manualTick {
		return nil
	}
	return tea.Tick(m.opts.Frame, func(time.Time) tea.Msg { return tickMsg{} })
}

// startPoll issues a new poll request; any answer still in flight becomes stale.
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
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		return snapshotMsg{id: id, snap: src.Poll(ctx)}
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
		return
	}
	m.inflight = false
	m.record(m.snap.Locks, msg.snap)
	m.snap = msg.snap
	m.snapGen++
	m.polled = true
	spans := make(map[string]span, len(m.snap.Locks))
	for _, li := range m.snap.Locks {
		sp := span{value: li.Value, max: li.Validity}
		if old, ok := m.span[li.Name]; ok && old.value == li.Value {
			sp.max = max(sp.max, old.max)
		}
		spans[li.Name] = sp
	}
	m.span = spans
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
	m.sortLocks()
}
