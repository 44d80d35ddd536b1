package quorum

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// TestBugFairUnwindAfterTheWinningRoundPutsTheHolderBackInTheQueue: master e of
// five stopped, and fair_unwind.lua never run on it (its script cache lacks it).
// A fair waiter's round is refused by a-d (another's key there) and not awaited
// on e: its clean-up of e (fair_unwind.lua) goes to e in the background. Its next
// round wins on a-d, and the winner's place is taken off e (leaveStragglers'
// ZREM). When e resumes it runs, in the order written: the first round (e is
// free: it grants, and takes the waiter out of the queue), the clean-up's
// EVALSHA (NOSCRIPT), the winning round (refused: the first round's key), the
// ZREM, and then the clean-up's EVAL, requeued behind them after the NOSCRIPT: it
// deleted the first round's key and put the waiter back at its place, after the
// ZREM. The holder stayed the head of e's queue until its heartbeat expired (44 s
// with these options), and another waiter got no vote from e meanwhile. So did
// a waiter that gave up after such a round (its leaving's script ran on e before
// the clean-up's EVAL). Now a waiter leaves the queue once the clean-ups of its
// failed rounds have ended.
func TestBugFairUnwindAfterTheWinningRoundPutsTheHolderBackInTheQueue(t *testing.T) {
	tests := []struct {
		name string
		// then ends the acquisition after its refused round, with e stopped.
		then func(t *testing.T, m *Manager, c *redistest.Cluster, name string, w *fairWaiter) (release func())
	}{
		{"the next round wins", func(t *testing.T, m *Manager, c *redistest.Cluster, name string, w *fairWaiter) func() {
			for _, s := range c.Servers[:4] {
				require.NoError(t, s.Client().Del(context.Background(), m.Key(name)).Err())
			}
			l, err := m.round(context.Background(), time.Now(), name, m.Key(name), "rl1.second", 10*time.Second, w, nil, false)
			require.NoError(t, err, "granted by a-d")
			return func() { require.NoError(t, l.Release(context.Background())) }
		}},
		{"the waiter gives up", func(t *testing.T, m *Manager, c *redistest.Cluster, name string, w *fairWaiter) func() {
			// The leaving waits for e (the node timeout) when it does not wait
			// for the clean-up first: e resumes well within that time, as in
			// the other case.
			left := make(chan struct{})
			go func() {
				defer close(left)
				m.leave(context.Background(), m.Key(name), w)
			}()
			time.Sleep(100 * time.Millisecond)
			return func() {
				<-left
				for _, s := range c.Servers[:4] {
					require.NoError(t, s.Client().Del(context.Background(), m.Key(name)).Err())
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := redistest.Start(t, 5, redistest.Options{})
			m := managerFor(t, c, waiterOpts()...)
			ctx := context.Background()
			// The fair round's, the release's and the leaving's scripts loaded
			// everywhere; not the unwind's.
			warm, err := m.Acquire(ctx, "warm", 10*time.Second, WithFair())
			require.NoError(t, err)
			require.NoError(t, warm.Release(ctx))
			for _, s := range c.Servers {
				require.NoError(t, s.Client().ScriptLoad(ctx, fairLeaveLua).Err())
			}

			const name = "order"
			key := m.Key(name)
			for _, s := range c.Servers[:4] {
				require.NoError(t, s.Client().Set(ctx, key, "rl1.other", time.Minute).Err())
			}
			e := c.Servers[4]
			e.Stop()
			stopped := true
			defer func() {
				if stopped {
					e.Cont()
				}
			}()
			w, err := m.newFairWaiter(false)
			require.NoError(t, err)
			_, err = m.round(ctx, time.Now(), name, key, "rl1.first", 10*time.Second, w, nil, false)
			require.ErrorIs(t, err, ErrHeld, "refused by a-d")
			release := tt.then(t, m, c, name, w)
			e.Cont()
			stopped = false
			release()

			assert.Eventually(t, func() bool {
				return len(queueOn(t, c, key)) == 0 && len(nonEmpty(keysOn(t, c, key))) == 0
			}, 3*time.Second, 10*time.Millisecond, "the waiter left in a queue")
			t.Logf("left: queue %v, keys %v", queueOn(t, c, key), nonEmpty(keysOn(t, c, key)))
		})
	}
}
