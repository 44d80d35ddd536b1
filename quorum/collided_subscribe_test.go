package quorum

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redlock/redlock/quorum/observe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Regression: a waiter's first round fails, it subscribes, and since a release
// before its subscription (or its marker) is in place would go unheard, it tries
// again at once (the `continue` after subscribed: woken). That round follows a
// release as much as a woken one, and the waiters that release freed contend in it
// and may collide just the same; but heard was set only after await, so the round
// after the `continue` did not count as woken: its collision (each contender some
// masters, a shared hold's sorted set among them, so no split vote) slept the whole
// retry delay, with the lock free and nobody to release it.
func TestBugCollisionAfterSubscribingSleepsTheRetryDelay(t *testing.T) {
	ctx := context.Background()
	c, holder := testCluster(t, 5)
	key := holder.Key("clash")
	var mu sync.Mutex
	stage := 0
	var released time.Time
	obs := observerFunc(func(e observe.Event) {
		if e.Kind != observe.EventMasterRound || e.Op != opAcquire {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		switch {
		case stage == 0 && e.Outcome == OutcomeForeign.String():
			// The waiter's first round failed against the holder. The holder now
			// releases before the waiter listens (nothing heard), and the contenders
			// that release freed take masters a and b (a shared hold), c and d (two
			// other waiters): the waiter's next round meets them.
			stage = 1
			released = time.Now()
			for _, s := range c.Servers {
				require.NoError(t, s.Client().Del(ctx, key).Err())
			}
			for _, s := range c.Servers[:2] {
				require.NoError(t, s.Client().ZAdd(ctx, key, zmember(float64(time.Now().Add(time.Minute).UnixMilli()), "rl1.shared")).Err())
				require.NoError(t, s.Client().PExpire(ctx, key, time.Minute).Err())
			}
			require.NoError(t, c.Servers[2].Client().Set(ctx, key, "rl1.other-waiter", time.Minute).Err())
			require.NoError(t, c.Servers[3].Client().Set(ctx, key, "rl1.third-waiter", time.Minute).Err())
		case stage == 1 && e.Outcome == OutcomeOK.String():
			// The waiter took master e: the others collided with it and clean up
			// quietly, before it chooses its delay.
			stage = 2
			for _, s := range c.Servers[:4] {
				require.NoError(t, s.Client().Del(ctx, key).Err())
			}
		}
	})
	_, err := holder.Acquire(ctx, "clash", time.Minute)
	require.NoError(t, err)
	waiter := managerFor(t, c, append(waiterOpts(), WithObserver(obs))...)
	l, err := waiter.Acquire(ctx, "clash", time.Minute)
	require.NoError(t, err)
	mu.Lock()
	d := time.Since(released)
	st := stage
	mu.Unlock()
	require.NoError(t, l.Release(ctx))
	require.Equal(t, 2, st, "the collision was not staged")
	t.Logf("the waiter held the lock %v after the release", d)
	assert.Less(t, d, wakeBound, "the waiter slept its %v retry delay after the round that followed its subscription collided", waiterRetry)
	checkLeftKeys(t, c, key)
}
