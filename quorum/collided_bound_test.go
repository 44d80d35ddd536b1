package quorum

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redlock/redlock/quorum/observe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The price of the collision pauses (collided), bounded: after a release, a plain
// holder takes a bare majority (a, b, c; d and e free, where the release
// published). A plain waiter's woken round reads that holder's value on a quorum
// (oneHolds) and keeps its retry delay; a shared or multi-name waiter's round reads
// no value, so it may make its maxCollisions short pauses, and no more, before
// the retry delay (5 s here, far past the test's window).
func TestCollisionPausesAreBoundedPerWakeUp(t *testing.T) {
	ctx := context.Background()
	c, holder := testCluster(t, 5)
	key := holder.Key("bm")
	kinds := []struct {
		name string
		most int // rounds after the release: the wake-up's round, its pauses' rounds, one more for a second message
		acq  func(context.Context, *Manager) (*Lock, error)
	}{
		{"plain", 2, func(ctx context.Context, m *Manager) (*Lock, error) { return m.Acquire(ctx, "bm", time.Minute) }},
		{"shared", 2 + maxCollisions, func(ctx context.Context, m *Manager) (*Lock, error) {
			return m.Acquire(ctx, "bm", time.Minute, withShared())
		}},
		{"multi", 2 + maxCollisions, func(ctx context.Context, m *Manager) (*Lock, error) {
			return m.takeMulti(ctx, []string{"bm", "bm2"}, time.Minute)
		}},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			for _, s := range c.Servers {
				require.NoError(t, s.Client().FlushAll(ctx).Err())
			}
			l, err := holder.Acquire(ctx, "bm", time.Minute)
			require.NoError(t, err)
			var answers atomic.Int64
			w := managerFor(t, c, append(waiterOpts(), WithObserver(observerFunc(func(e observe.Event) {
				if e.Kind == observe.EventMasterRound && e.Op == opAcquire {
					answers.Add(1)
				}
			})))...)
			wctx, cancel := context.WithTimeout(ctx, 2500*time.Millisecond)
			defer cancel()
			var wg sync.WaitGroup
			wg.Go(func() {
				if l, err := k.acq(wctx, w); err == nil {
					_ = l.Release(ctx)
				}
			})
			time.Sleep(500 * time.Millisecond) // the waiter waits, subscribed and marked
			before := answers.Load()
			for _, s := range c.Servers[:3] {
				require.NoError(t, s.Client().Set(ctx, key, "rl1.bare-majority-holder", time.Minute).Err())
			}
			_ = l.Release(ctx) // ours only on d and e: deleted and published there
			time.Sleep(1500 * time.Millisecond)
			rounds := int(answers.Load()-before) / len(c.Servers)
			t.Logf("%s waiter: %d rounds after the release", k.name, rounds)
			assert.Positive(t, rounds, "the release woke the waiter")
			assert.LessOrEqual(t, rounds, k.most, "short pauses past their bound")
			cancel()
			wg.Wait()
		})
	}
}
