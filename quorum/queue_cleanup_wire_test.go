package quorum

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQueueCleanUpsGoThroughTheTransport: the best-effort removals of a fair
// winner from the queues of the masters that did not grant it, and of a
// waiter's marker from every master, are sent through the Manager's transport
// (ZREM) to those masters only; a paused master neither keeps the others from
// being cleaned nor outlives the Manager's Close by more than the node timeout.
func TestQueueCleanUpsGoThroughTheTransport(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3, WithNodeTimeout(time.Second))
	sent := recordSent(m)
	const key = "lock:cleanup"
	qkey := key + queueSuffix
	fill := func() {
		for _, s := range c.Servers {
			require.NoError(t, s.Client().ZAdd(ctx, qkey, redis.Z{Score: 1, Member: "q:w1"}, redis.Z{Score: 2, Member: "h:w1"},
				redis.Z{Score: 3, Member: "h:~mark"}, redis.Z{Score: 4, Member: "q:other"}).Err())
		}
	}
	members := func(i int) []string {
		v, err := c.Servers[i].Client().ZRange(ctx, qkey, 0, -1).Result()
		require.NoError(t, err)
		return v
	}
	fill()
	rep := &Report{Nodes: []NodeResult{{Outcome: OutcomeOK}, {Outcome: OutcomeError}, {Outcome: OutcomeForeign}}}
	m.leaveStragglers(ctx, key, &fairWaiter{id: "w1", mode: "wait"}, rep)
	m.unmark(ctx, key, &waitMark{id: "~mark"})
	require.Eventually(t, func() bool {
		return slices.Equal(members(1), []string{"q:other"}) && slices.Equal(members(2), []string{"q:other"}) &&
			slices.Equal(members(0), []string{"q:w1", "h:w1", "q:other"})
	}, 5*time.Second, 10*time.Millisecond, "the winner left where it was not granted, the marker everywhere")
	var only [][]bool
	for _, c := range sent.matching(ofCommand("ZREM")) {
		only = append(only, c.Only)
	}
	assert.ElementsMatch(t, [][]bool{{false, true, true}, nil}, only, "the ZREMs went through the transport")

	t.Run("a master paused", func(t *testing.T) {
		fill()
		c.Servers[1].Stop()
		defer c.Servers[1].Cont()
		m.unmark(ctx, key, &waitMark{id: "~mark"})
		require.Eventually(t, func() bool {
			return !slices.Contains(members(0), "h:~mark") && !slices.Contains(members(2), "h:~mark")
		}, 5*time.Second, 10*time.Millisecond, "the others are cleaned")
		t0 := time.Now()
		require.NoError(t, m.Close())
		assert.Less(t, time.Since(t0), 5*time.Second, "Close waits no longer than the node timeout")
	})
}
