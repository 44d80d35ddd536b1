package quorum

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAttackDecidedRoundsCancelledBesideABrieflyStoppedMaster: a lock held on five
// masters, one of them stopped for 300 ms (node timeout 1 s) while other Managers'
// Acquires (plain, fair, waiting and try) are cancelled at random moments in their
// refused rounds, their clean-ups of the stopped master queued behind their
// rounds. Once the master resumed and the clean-ups ran, every master holds the
// holder's value only, its release leaves nothing (keys, queue entries), and a new
// acquisition of the name succeeds at once.
func TestAttackDecidedRoundsCancelledBesideABrieflyStoppedMaster(t *testing.T) {
	const timeout = time.Second
	tests := []struct {
		name string
		opts []LockOption
		try  bool
	}{
		{"plain Acquire", nil, false},
		{"fair Acquire", []LockOption{WithFair()}, false},
		{"plain TryAcquire", nil, true},
		{"fair TryAcquire", []LockOption{WithFair()}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, a := testCluster(t, 5, WithNodeTimeout(timeout))
			ctx := context.Background()
			bs := make([]*Manager, 3)
			for i := range bs {
				bs[i] = managerFor(t, c, WithNodeTimeout(timeout), WithRetry(5, 10*time.Millisecond, 5*time.Millisecond))
				warm, err := bs[i].TryAcquire(ctx, "cancelled", time.Second, tt.opts...)
				require.NoError(t, err)
				require.NoError(t, warm.Release(ctx))
			}
			held, err := a.TryAcquire(ctx, "cancelled", time.Minute)
			require.NoError(t, err)
			c.Servers[4].Stop()
			defer c.Servers[4].Cont()
			done := make(chan error, len(bs))
			for _, b := range bs {
				go func() {
					cctx, cancel := context.WithTimeout(ctx, time.Duration(rand.IntN(60))*time.Millisecond)
					defer cancel()
					var l *Lock
					var err error
					if tt.try {
						l, err = b.TryAcquire(cctx, "cancelled", 10*time.Second, tt.opts...)
					} else {
						l, err = b.Acquire(cctx, "cancelled", 10*time.Second, tt.opts...)
					}
					if l != nil {
						_ = l.Release(ctx)
					}
					done <- err
				}()
			}
			time.Sleep(300 * time.Millisecond)
			c.Servers[4].Cont()
			for range bs {
				select {
				case err := <-done:
					assert.ErrorIs(t, err, ErrNotAcquired)
				case <-time.After(10 * timeout):
					t.Fatal("an acquisition hangs")
				}
			}
			require.Eventually(t, func() bool {
				for master, v := range nonEmpty(keysOn(t, c, held.key)) {
					if v != held.Token() {
						t.Logf("master %s: %s", master, v)
						return false
					}
				}
				return true
			}, 3*timeout, 20*time.Millisecond, "only the holder's value once the clean-ups ran")
			require.NoError(t, held.Release(ctx))
			assert.Empty(t, nonEmpty(keysOn(t, c, held.key)), "nothing left once the holder released")
			// A queue entry a cancelled fair waiter left would stand ahead of a
			// fair newcomer; it must take the lock at once.
			t0 := time.Now()
			l, err := bs[0].TryAcquire(ctx, "cancelled", time.Second, tt.opts...)
			require.NoError(t, err, "the name is free, nobody queued")
			assert.Less(t, time.Since(t0), timeout/2)
			require.NoError(t, l.Release(ctx))
		})
	}
}
