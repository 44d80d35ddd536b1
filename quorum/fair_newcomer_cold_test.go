package quorum

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// TestBugFairColdNewcomerAheadOfTheWokenHeadStallsTheQueue: the newcomer of
// TestBugFairNewcomerAheadOfTheWokenHeadStallsTheQueue on a Manager that has not
// listened for wake-ups before (a one-shot process's first acquisition). Its
// first failed round is followed by its subscription and, once confirmed, by a
// round at once, which counts as woken: that round, granted on a and b, got at
// most maxSoon short pauses (a few milliseconds) and then the whole retry
// delay, so a release that reached d and e a little later stood the queue still
// for the retry delay, where a warm newcomer keeps trying after doubling pauses.
func TestBugFairColdNewcomerAheadOfTheWokenHeadStallsTheQueue(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := redistest.Start(t, 5, redistest.Options{})
	const delay = 10 * time.Second
	waiter := managerFor(t, c, WithRetry(1000, delay, 0))
	key := waiter.Key("newcomer")

	require.NoError(t, c.Servers[2].Client().Set(ctx, key, "someone else", time.Minute).Err())
	for _, i := range []int{3, 4} {
		require.NoError(t, c.Servers[i].Client().Set(ctx, key, "holder", time.Minute).Err())
	}
	got := make(chan error, 1)
	go func() {
		l, err := waiter.Acquire(ctx, "newcomer", 10*time.Second, WithFair())
		if err == nil {
			_ = l.Release(context.Background()) // c stays someone else's
		}
		got <- err
	}()
	require.Eventually(t, func() bool {
		h := waiter.runningHub()
		return h != nil && assert.ObjectsAreEqual([]int{0, 1, 2}, confirmedOn(h, ownWakeChannel(key, waiter.wakeTag)))
	}, 5*time.Second, time.Millisecond, "the waiter listens on a, b and c")
	require.Eventually(t, func() bool {
		q := queueOn(t, c, key)
		for _, i := range []int{0, 1, 3, 4} {
			if len(q[c.Servers[i].Name]) != 1 {
				return false
			}
		}
		for _, i := range []int{0, 1} {
			if c.Servers[i].Client().Exists(ctx, key).Val() != 0 {
				return false
			}
		}
		return true
	}, 5*time.Second, time.Millisecond, "the waiter queued on a, b, d and e, a and b free")

	released := time.Now()
	for _, i := range []int{3, 4} {
		n, err := releaseScript.Run(ctx, c.Servers[i].Client(), []string{key, key + queueSuffix}, "holder", wakeChannel(key)).Int64()
		require.NoError(t, err)
		require.Equal(t, int64(1), n, "released on %s", c.Servers[i].Name)
	}
	select {
	case err := <-got:
		require.NoError(t, err)
		assert.Less(t, time.Since(released), 3*time.Second, "taken soon after the release, not after the %v retry delay", delay)
	case <-time.After(4 * time.Second):
		t.Fatalf("the queue stood still: the waiter did not take the lock within 4s of the release (its retry delay is %v)", delay)
	}
}
