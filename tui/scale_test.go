package tui

import (
	"testing"
)

// scaled returns a console over 100,000 live locks, polled once.
func scaled(b *testing.B) (*Model, *fakeSource) {
	m, src, _, _ := fixture(&testing.T{}, 160, 50, false)
	manyLocks(src, 100000)
	m.pollID++
	m.applySnapshot(snapshotMsg{id: m.pollID, snap: src.Poll(nil, nil)})
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
				m.onKey(keys(tc.keys))
			}
			_ = m.View() // the sort, done once per snapshot (in the poll's command for a new one)
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
		keys string
	}{{"by-name", ""}, {"by-validity", "V"}, {"filter-owner", "/bob\r"}} {
		b.Run(tc.name, func(b *testing.B) {
			m, src := scaled(b)
			for _, r := range tc.keys {
				m.onKey(keys(string(r)))
			}
			_ = m.View()
			msgs := make([]snapshotMsg, 0, 64)
			for range 64 {
				m.pollID++
				msgs = append(msgs, m.startPoll()().(snapshotMsg))
			}
			_ = src
			b.ResetTimer()
			i := 0
			for b.Loop() {
				msg := msgs[i%len(msgs)]
				m.pollID = msg.id
				m.applySnapshot(msg)
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
			base := prepBase{locks: m.snap.Locks, spans: m.span, key: m.listKey()}
			snap := src.Poll(nil, nil)
			snap.EventSource = tc.from
			b.ResetTimer()
			for b.Loop() {
				_ = base.prepare(snap)
			}
		})
	}
}
