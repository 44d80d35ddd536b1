package tui

import (
	"context"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// scaled returns a console over 100,000 live locks, polled once.
func scaled(b *testing.B) (*Model, *fakeSource) {
	m, src, _, _ := fixture(&testing.T{}, 160, 50, false)
	manyLocks(src, 100000)
	applyNow(m, src.Poll(context.Background(), nil))
	return m, src
}

// BenchmarkFrame100k renders one frame of the console with 100,000 live locks
// (the list sorted by name, then by validity): a frame must stay well under 16ms.
func BenchmarkFrame100k(b *testing.B) {
	for _, tc := range []struct {
		name string
		keys string
	}{{"by-name", ""}, {"by-validity", "V"}} {
		b.Run(tc.name, func(b *testing.B) {
			m, _ := scaled(b)
			if tc.keys != "" {
				_, cmd := m.Update(keys(tc.keys))
				m.Update(cmd()) // the sort, done once per listing, in a command
			}
			_ = m.View()
			b.ResetTimer()
			for b.Loop() {
				_ = m.View()
			}
		})
	}
}

// BenchmarkApplySnapshot100k is what the UI goroutine does when a poll answer of
// 100,000 locks arrives: apply the prepared answer and draw the next frame. The
// preparation (sorting, spans, events, filter) runs in the poll's command and is
// measured by BenchmarkPrepare100k.
func BenchmarkApplySnapshot100k(b *testing.B) {
	for _, tc := range []struct {
		name string
		keys []tea.KeyMsg
	}{{"by-name", nil}, {"by-validity", []tea.KeyMsg{keys("V")}}, {"filter-owner", []tea.KeyMsg{keys("/"), keys("b"), keys("o"), keys("b"), enter}}} {
		b.Run(tc.name, func(b *testing.B) {
			m, src := scaled(b)
			for _, k := range tc.keys {
				m.onKey(k)
			}
			_ = m.View()
			msgs := make([]snapshotMsg, 0, 64)
			for range 64 {
				msgs = append(msgs, m.startPoll()().(snapshotMsg))
			}
			_ = src
			b.ResetTimer()
			i := 0
			for b.Loop() {
				msg := msgs[i%len(msgs)]
				m.poll.id = msg.id
				m.onSnapshot(msg)
				_ = m.View()
				i++
			}
		})
	}
}

// BenchmarkPrepare100k is the work a poll's command does off the UI goroutine for
// an answer of 100,000 locks: with the source's own events (the cluster source),
// and with the console comparing snapshots itself.
func BenchmarkPrepare100k(b *testing.B) {
	for _, tc := range []struct {
		name, from string
	}{{"source-events", EventsKeyspace}, {"diff", ""}} {
		b.Run(tc.name, func(b *testing.B) {
			m, src := scaled(b)
			base := m.poll.base(m.table.key())
			snap := src.Poll(context.Background(), nil)
			snap.EventSource = tc.from
			b.ResetTimer()
			for b.Loop() {
				_ = base.prepare(snap)
			}
		})
	}
}
