package quorum

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// One Semaphore, Shared or Multi value is shared by goroutines that take and
// give back holds through it at once: the bound of each primitive holds among
// them (at most its permits, any number of shared holders, one multi-name
// holder), and the race detector sees no shared state written.
func TestPrimitiveTypesAreSafeForConcurrentUse(t *testing.T) {
	_, m := testCluster(t, 3)
	sem, err := m.Semaphore("cu-sem", 2)
	require.NoError(t, err)
	sh, err := m.Shared("cu-sh")
	require.NoError(t, err)
	names := []string{"cu-b", "cu-a"}
	mu, err := m.Multi(names...)
	require.NoError(t, err)
	names[0] = "cu-changed" // Multi keeps its own copy
	tests := []struct {
		name  string
		bound int // at most this many holders at once; 0: no bound
		take  func(ctx context.Context) (*Lock, error)
	}{
		{"semaphore", 2, func(ctx context.Context) (*Lock, error) {
			p, err := sem.Acquire(ctx, 5*time.Second, WithWait(20*time.Second))
			if err != nil {
				return nil, err
			}
			assert.Contains(t, []int{0, 1}, p.Slot())
			return p.Lock, nil
		}},
		{"shared", 0, func(ctx context.Context) (*Lock, error) {
			return sh.Acquire(ctx, 5*time.Second, WithWait(20*time.Second))
		}},
		{"multi", 1, func(ctx context.Context) (*Lock, error) {
			l, err := mu.Acquire(ctx, 5*time.Second, WithWait(20*time.Second))
			if err == nil {
				assert.Equal(t, "cu-a cu-b", l.Name())
			}
			return l, err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var held, most atomic.Int32
			var wg sync.WaitGroup
			for range 6 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 3 {
						l, err := tt.take(ctx)
						if !assert.NoError(t, err) {
							return
						}
						n := held.Add(1)
						for o := most.Load(); n > o && !most.CompareAndSwap(o, n); o = most.Load() {
						}
						time.Sleep(5 * time.Millisecond)
						held.Add(-1)
						assert.NoError(t, l.Release(ctx))
					}
				}()
			}
			wg.Wait()
			if tt.bound > 0 {
				assert.LessOrEqual(t, int(most.Load()), tt.bound, "holders at once")
			}
		})
	}
}
