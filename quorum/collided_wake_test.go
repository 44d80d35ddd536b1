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

// observerFunc is an Observer made of a function.
type observerFunc func(observe.Event)

func (f observerFunc) Observe(e observe.Event) { f(e) }

// Regression: waiters woken together by one release collided, each taking some
// masters and none a quorum (a shared hold on two masters, two other waiters on one
// each, this waiter on the last). Each deleted what its round set without publishing
// (a failed round's clean-up is quiet), so the lock was free everywhere and nobody
// would release it; and none of them could tell from its round that nobody won (the
// shared hold's holders are unknown, so they and the other waiter may have been one
// holder's quorum: no split vote). Every one slept its whole retry delay. Seen in
// TestAttackShortReleaseHandoffsUnderContention as a handoff of 5 s, for a plain
// and for a fair waiter. A waiter whose woken round collided tries again soon.
func TestBugLostWakeUpWhenWokenWaitersCollide(t *testing.T) {
	ctx := context.Background()
	c, holder := testCluster(t, 5)
	key := holder.Key("clash")
	var once sync.Once
	collide := func() {
		// The other contenders' clean-ups: quiet deletes, as their failed rounds make.
		for _, s := range c.Servers[:4] {
			require.NoError(t, s.Client().Del(ctx, key).Err())
		}
	}
	var after bool
	var mu sync.Mutex
	obs := observerFunc(func(e observe.Event) {
		mu.Lock()
		armed := after
		mu.Unlock()
		// The waiter's first round after the release took a master: the others
		// collided with it and now clean up, before it chooses its delay.
		if armed && e.Kind == observe.EventMasterRound && e.Op == opAcquire && e.Outcome == OutcomeOK.String() {
			once.Do(collide)
		}
	})
	waiter := managerFor(t, c, append(waiterOpts(), WithObserver(obs))...)
	l, err := holder.Acquire(ctx, "clash", time.Minute)
	require.NoError(t, err)
	d := wakeAfter(t, 300*time.Millisecond, func(ctx context.Context) (*Lock, error) {
		return waiter.Acquire(ctx, "clash", time.Minute)
	}, func() {
		// The contenders the same release woke took masters a and b (a shared
		// hold: a sorted set, whose holders a plain round cannot read), c and d
		// (two other waiters), replacing the holder's keys there without a
		// release (nothing published): the holder's release deletes and publishes
		// on e only (one wake-up: none arrives during the waiter's round).
		for _, s := range c.Servers[:2] {
			require.NoError(t, s.Client().Del(ctx, key).Err())
			require.NoError(t, s.Client().ZAdd(ctx, key, zmember(float64(time.Now().Add(time.Minute).UnixMilli()), "rl1.shared")).Err())
			require.NoError(t, s.Client().PExpire(ctx, key, time.Minute).Err())
		}
		require.NoError(t, c.Servers[2].Client().Set(ctx, key, "rl1.other-waiter", time.Minute).Err())
		require.NoError(t, c.Servers[3].Client().Set(ctx, key, "rl1.third-waiter", time.Minute).Err())
		mu.Lock()
		after = true
		mu.Unlock()
		// Refused on a, b (a sorted set there), c and d (not its key): a partial release.
		_ = l.Release(ctx)
	})
	t.Logf("the waiter held the lock %v after the release", d)
	assert.Less(t, d, wakeBound, "the waiter slept its %v retry delay after its woken round collided", waiterRetry)
	checkLeftKeys(t, c, key)
}

// collided shortens the delay only after a wake-up, for a round that some masters
// granted, at most maxCollisions times in a row.
func TestCollidedNeedsAWakeUpAndAVoteAndStops(t *testing.T) {
	rep := func(votes int) *RoundError {
		r := Report{Op: opAcquire, Quorum: 3, Votes: votes}
		return &RoundError{Report: r, Kind: ErrHeld}
	}
	n := 0
	assert.False(t, collided(rep(2), false, &n), "no wake-up")
	assert.False(t, collided(rep(0), true, &n), "granted nowhere")
	assert.False(t, collided(&RoundError{Report: Report{Votes: 2}, Kind: ErrUnavailable}, true, &n), "not held")
	assert.False(t, collided(ErrHeld, true, &n), "not a round error")
	held := rep(2)
	held.Report.Nodes = []NodeResult{{Outcome: OutcomeOK}, {Outcome: OutcomeOK},
		{Outcome: OutcomeForeign, holder: "x"}, {Outcome: OutcomeForeign, holder: "x"}, {Outcome: OutcomeForeign, holder: "x"}}
	assert.False(t, collided(held, true, &n), "another holder's value on a quorum: its release wakes the waiter")
	held.Report.Nodes[4].holder = "y"
	assert.True(t, collided(held, true, &n), "no value on a quorum: they may have collided")
	n = 0
	for i := range maxCollisions {
		assert.True(t, collided(rep(2), true, &n), "collision %d", i+1)
	}
	assert.False(t, collided(rep(2), true, &n), "past maxCollisions")
	assert.Zero(t, n, "the count starts again")
	assert.True(t, collided(rep(1), true, &n))
	for k := 1; k <= maxCollisions; k++ {
		for range 50 {
			d := backoffDelay(&RoundError{Report: Report{Elapsed: time.Millisecond}}, time.Second, k)
			assert.Positive(t, d)
			assert.LessOrEqual(t, d, 2*time.Millisecond<<(k-1))
		}
	}
	assert.Equal(t, time.Second, backoffDelay(ErrHeld, time.Second, 1), "not a round error: the whole delay")
}
