package tui

import (
	"testing"
)

// BenchmarkFrame100k renders one frame of the console with 100,000 live locks
// (the list sorted by name, then by validity, then filtered by owner): a frame
// must stay well under 16ms.
func BenchmarkFrame100k(b *testing.B) {
	for _, tc := range []struct {
		name string
		keys string
	}{{"by-name", ""}, {"by-validity", "V"}} {
		b.Run(tc.name, func(b *testing.B) {
			m, src, _, _ := fixture(&testing.T{}, 160, 50, false)
			manyLocks(src, 100000)
			m.snap = src.Poll(nil)
			m.polled = true
			m.sortLocks()
			if tc.keys != "" {
				m.onKey(keys(tc.keys))
			}
			b.ResetTimer()
			for b.Loop() {
				_ = m.View()
			}
		})
	}
}
