package quorum

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBugFairSemaphoreFailedRoundKeepsThePlace: a fair semaphore waiter whose
// round a minority of masters granted (it was the head there and a permit was
// free) keeps its place in the queue on those masters once the round has
// failed and its permits there are released: the waiter behind it is still
// behind it on every master. The round took the place out with the grant and
// the clean-up only released the slot, so on those masters the next waiter was
// first in line for the slot just freed until the waiter's next round.
func TestBugFairSemaphoreFailedRoundKeepsThePlace(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3)
	const name = "fsem"
	holder, err := m.TryAcquire(ctx, name, time.Minute, withPermits(1))
	require.NoError(t, err)
	acq, err := m.newPermitAcquirer(name, &lockConfig{primSpec: primSpec{permits: 1, semaphore: true}, fair: true})
	require.NoError(t, err)
	a := acq.(*permitAcquirer)
	first, err := m.newFairWaiter(false)
	require.NoError(t, err)
	second, err := m.newFairWaiter(false)
	require.NoError(t, err)
	first.score, second.score = "1000", "2000" // first is ahead
	round := func(w *fairWaiter) error {
		_, err := a.round(ctx, time.Now(), "rl1.waiter-"+w.id+".x", 5*time.Second, w)
		return err
	}
	// Both queue up behind the holder on every master.
	require.ErrorIs(t, round(first), ErrNotAcquired)
	require.ErrorIs(t, round(second), ErrNotAcquired)
	queue := "lock:" + name + ":permit:queue"
	// The permit frees on master 0 alone (its release has reached it only).
	require.NoError(t, c.Servers[0].Client().Del(ctx, holder.Key()).Err())

	require.ErrorIs(t, round(first), ErrNotAcquired, "granted on one master of three")
	for i, s := range c.Servers {
		order, err := s.Client().ZRangeArgs(ctx, redis.ZRangeArgs{Key: queue, Start: "0", Stop: "+inf", ByScore: true}).Result()
		require.NoError(t, err)
		assert.Equal(t, []string{"q:" + first.id, "q:" + second.id}, order, "master %d: the queue's order", i)
	}
	assert.Empty(t, keysOn(t, c, holder.Key())[c.Servers[0].Name], "the failed round's permit is released")
}
