package quorum

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// TestAttackFairFIFOUnderAPause: waiters of several Managers queued in order take
// the lock in that order, one master paused during the handoffs.
func TestAttackFairFIFOUnderAPause(t *testing.T) {
	for _, paused := range []int{-1, 0, 4, 2} {
		t.Run(strconv.Itoa(paused), func(t *testing.T) {
			ctx := context.Background()
			c := redistest.Start(t, 5, redistest.Options{})
			first, err := managerFor(t, c).Acquire(ctx, "fifo", 30*time.Second, WithFair())
			require.NoError(t, err)
			const n = 6
			var mu sync.Mutex
			var order []int
			var wg sync.WaitGroup
			for i := 0; i < n; i++ {
				m := managerFor(t, c, WithRetry(1000, 300*time.Millisecond, 50*time.Millisecond), WithNodeTimeout(100*time.Millisecond))
				wg.Add(1)
				go func() {
					defer wg.Done()
					l, err := m.Acquire(ctx, "fifo", 30*time.Second, WithFair())
					if !assert.NoError(t, err) {
						return
					}
					mu.Lock()
					order = append(order, i)
					mu.Unlock()
					time.Sleep(5 * time.Millisecond)
					_ = l.Release(ctx) // a paused master does not answer
				}()
				require.Eventually(t, func() bool {
					q := queueOn(t, c, "lock:fifo")
					return len(q["a"]) == i+1
				}, 5*time.Second, time.Millisecond)
			}
			if paused >= 0 {
				c.Servers[paused].Stop()
			}
			t0 := time.Now()
			_ = first.Release(ctx)
			wg.Wait()
			if paused >= 0 {
				c.Servers[paused].Cont()
			}
			t.Logf("paused %d: order %v in %v", paused, order, time.Since(t0))
			assert.Equal(t, []int{0, 1, 2, 3, 4, 5}, order)
		})
	}
}
