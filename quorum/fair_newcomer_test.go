package quorum

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// TestBugFairNewcomerAheadOfTheWokenHeadStallsTheQueue: a waiter whose first round
// finds it the head where a release already ran (granted there) and queues it where
// the release has not run yet is woken by nobody: the release it overtook woke
// whoever was the head before it (or nobody), and the later releases name it only
// on the masters it does not listen on (wake_narrow.go). Seen in the fair benchmark
// (5 processes x 5,000 acquisitions, 1 run in 2): a newcomer with the same
// enqueue millisecond as the woken head sorted ahead of it, took 2 of 5 masters,
// and the whole queue stood still for its retry delay (130-190 ms). It now tries
// again after short, doubling pauses while its rounds are granted somewhere.
//
// Here, on five masters (the waiter listens on a, b and c): the holder's release
// has run on a and b, not yet on d and e; c is held by someone else (out of the
// waiter's reach for the test's length). The waiter's first round takes a and b
// and queues it on c, d and e; then the release reaches d and e, and wakes it only
// there. Before the fix it took the lock after its whole retry delay (10 s).
func TestBugFairNewcomerAheadOfTheWokenHeadStallsTheQueue(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := redistest.Start(t, 5, redistest.Options{})
	const delay = 10 * time.Second
	waiter := managerFor(t, c, WithRetry(1000, delay, 0))
	key := waiter.Key("newcomer")

	// Warm the waiter's subscriptions, as a client that waited for the lock before:
	// its next acquisition registers before its first round, as in the benchmark.
	first, err := managerFor(t, c).Acquire(ctx, "newcomer", 10*time.Second, WithFair())
	require.NoError(t, err)
	warm := make(chan error, 1)
	go func() {
		l, err := waiter.Acquire(ctx, "newcomer", 10*time.Second, WithFair())
		if err == nil {
			err = l.Release(ctx)
		}
		warm <- err
	}()
	require.Eventually(t, func() bool {
		h := waiter.runningHub()
		return h != nil && assert.ObjectsAreEqual([]int{0, 1, 2}, confirmedOn(h, ownWakeChannel(key, waiter.wakeTag)))
	}, 5*time.Second, 5*time.Millisecond, "the waiter listens on a, b and c")
	require.NoError(t, first.Release(ctx))
	require.NoError(t, <-warm)

	newcomerAheadOfTheWokenHead(ctx, t, c, waiter, delay, func() {})
}

// newcomerAheadOfTheWokenHead plays the newcomer's scenario on c's five masters
// with waiter (retry delay delay): c held by someone else, d and e by the holder,
// a and b free; the waiter asks for the lock (afterStart runs once it was asked),
// is queued on a, b, d and e with a and b given back, then d and e are released.
// It fails unless the waiter takes the lock well within its retry delay.
func newcomerAheadOfTheWokenHead(ctx context.Context, t *testing.T, c *redistest.Cluster, waiter *Manager, delay time.Duration, afterStart func()) {
	t.Helper()
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
	afterStart()
	// Its first round is over once it is queued on d and e and its clean-up gave a
	// and b back (its place kept there, the key gone).
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

// TestQueueScoreKeepsTheOrderWithinAMillisecond: two waiters of one millisecond
// sort by their enqueue time to the microsecond, whatever their ids; the score
// parses as the sorted set's double does, and whole milliseconds (a waiter of an
// older version) sort among them by the same clock.
func TestQueueScoreKeepsTheOrderWithinAMillisecond(t *testing.T) {
	base := time.UnixMilli(1795801312499)
	tests := []struct {
		name string
		at   time.Time
		want string
	}{
		{"the millisecond itself", base, "1795801312499.000"},
		{"one microsecond after", base.Add(time.Microsecond), "1795801312499.001"},
		{"the last microsecond", base.Add(999 * time.Microsecond), "1795801312499.999"},
		{"nanoseconds are dropped", base.Add(12345 * time.Nanosecond), "1795801312499.012"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, queueScore(tt.at))
		})
	}

	ctx := context.Background()
	c := redistest.Start(t, 1, redistest.Options{})
	rc := c.Servers[0].Client()
	// Members in the order a tie would put them, scores in the order of asking.
	require.NoError(t, rc.Do(ctx, "ZADD", "q", queueScore(base.Add(2*time.Microsecond)), "q:a-later",
		queueScore(base.Add(time.Microsecond)), "q:z-earlier", "1795801312498", "q:old-version",
		"1795801312500", "q:old-version-next").Err())
	got, err := rc.ZRange(ctx, "q", 0, -1).Result()
	require.NoError(t, err)
	assert.Equal(t, []string{"q:old-version", "q:z-earlier", "q:a-later", "q:old-version-next"}, got)
	assert.True(t, strings.HasPrefix(queueScore(time.Now()), "1"), "a positive score: the queue's places are the scores >= 0")
}
