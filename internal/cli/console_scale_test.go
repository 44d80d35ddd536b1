package cli

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/internal/connect"
	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/topology"
)

// BenchmarkConsole100k measures the console's listing at 100,000 live locks on 5
// real masters: "pass" is one complete background pass of the incremental listing
// (what the loop spends per refresh of the whole list), "poll" is one poll of the
// console (health probe, the 40 rows on screen read afresh, the latest listing
// taken), and "interval" is one second of a console running with a 1s interval:
// a poll and the share of the paced background pass (passes/op says how much of a
// pass one interval sees). Each reports the process CPU it used per operation
// (cpu-ms/op).
//
//	go test ./internal/cli -run XXX -bench Console100k -benchtime 5x
func BenchmarkConsole100k(b *testing.B) {
	const locks = 100000
	t := &testing.T{}
	rc := redistest.Start(t, 5, redistest.Options{})
	b.Cleanup(func() {
		for _, s := range rc.Servers {
			s.Kill()
		}
	})
	c := topology.NewCluster("bench")
	c.RestartQuarantine = false
	ctx := context.Background()
	for _, s := range rc.Servers {
		c.Masters = append(c.Masters, topology.Master{Name: s.Name, Address: s.Addr()})
		pipe := s.Client().Pipeline()
		for i := range locks {
			pipe.Set(ctx, fmt.Sprintf("lock:svc/%06d", i), fmt.Sprintf("rl1.%024x", i), time.Hour)
			if i%10000 == 9999 {
				_, err := pipe.Exec(ctx)
				require.NoError(b, err)
			}
		}
	}
	visible := make([]string, 40)
	for i := range visible {
		visible[i] = fmt.Sprintf("svc/%06d", 50000+i)
	}

	b.Run("pass", func(b *testing.B) {
		mgr, err := connect.Manager(c)
		require.NoError(b, err)
		defer mgr.Close()
		cpu0 := processCPU()
		for b.Loop() {
			s := admin.New(mgr).NewScanner("")
			for !s.Progress().Complete {
				require.NoError(b, s.Step(ctx))
			}
			lst, err := s.Listing()
			require.NoError(b, err)
			require.Len(b, lst.Locks, locks)
		}
		b.ReportMetric(float64(processCPU()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	})
	b.Run("poll", func(b *testing.B) {
		src, _, cleanup, err := newClusterSource(c, sourceSettings{interval: time.Hour})
		require.NoError(b, err)
		defer cleanup()
		snap := src.Poll(ctx, visible) // waits for the first pass
		for snap.Scan == nil || !snap.Scan.Complete {
			time.Sleep(100 * time.Millisecond)
			snap = src.Poll(ctx, visible)
		}
		require.Len(b, snap.Locks, locks)
		cpu0 := processCPU()
		b.ResetTimer()
		for b.Loop() {
			snap = src.Poll(ctx, visible)
			require.NoError(b, snap.Err)
		}
		b.ReportMetric(float64(processCPU()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	})
	b.Run("interval", func(b *testing.B) {
		src, _, cleanup, err := newClusterSource(c, sourceSettings{interval: time.Second})
		require.NoError(b, err)
		defer cleanup()
		snap := src.Poll(ctx, visible)
		for snap.Scan == nil || !snap.Scan.Complete {
			time.Sleep(100 * time.Millisecond)
			snap = src.Poll(ctx, visible)
		}
		passes0 := snap.Scan.Passes
		cpu0 := processCPU()
		b.ResetTimer()
		for b.Loop() {
			time.Sleep(time.Second)
			snap = src.Poll(ctx, visible)
			require.NoError(b, snap.Err)
		}
		b.ReportMetric(float64(processCPU()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
		b.ReportMetric(float64(snap.Scan.Passes-passes0)/float64(b.N), "passes/op")
	})
}
