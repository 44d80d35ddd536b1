package quorum

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// TestBugLossWatchFlushesOfAnotherDBReadInAHotLoop: a master pushes a null
// invalidation, which names every key, for a FLUSHDB of any of its databases.
// A client of another database flushing it in a loop (about 3,000 times a
// second here) made the loss watch read every key it watches for each one:
// 363,001 reads in a second on a master for 1,000 locks. Flushes pushed within
// a short while are read together; a real flush is still heard.
func TestBugLossWatchFlushesOfAnotherDBReadInAHotLoop(t *testing.T) {
	c, m := testCluster(t, 3)
	ctx := context.Background()
	const locks = 1000
	var ls []*Lock
	for i := range locks {
		l, err := m.Acquire(ctx, fmt.Sprintf("flushed%d", i), time.Minute, WithLossWatch())
		require.NoError(t, err)
		ls = append(ls, l)
	}
	armed(t, m, ls[0])
	armed(t, m, ls[locks-1])
	cl := c.Servers[0].Client()
	other := redis.NewClient(&redis.Options{Addr: c.Servers[0].Addr(), DB: 9, Protocol: 2})
	t.Cleanup(func() { _ = other.Close() })
	r0 := readsOn(t, cl)
	flushes := 0
	for end := time.Now().Add(time.Second); time.Now().Before(end); flushes++ {
		require.NoError(t, other.FlushDB(ctx).Err())
	}
	reads := readsOn(t, cl) - r0
	t.Logf("%d FLUSHDB of database 9 in 1 s: %d reads on the master of the locks", flushes, reads)
	// A read of every key per trackSlow, and a margin: never one per flush.
	require.Less(t, reads, 3*locks*int(time.Second/trackSlow), "reads of every key for every flush of another database")
	for _, l := range ls {
		require.NoError(t, l.Err(), "%s: no loss while every master holds it", l.Name())
	}

	// A real flush of two masters of three is still heard.
	for _, s := range c.Servers[:2] {
		require.NoError(t, s.Client().FlushAll(ctx).Err())
	}
	for _, l := range []*Lock{ls[0], ls[locks-1]} {
		select {
		case <-l.Done():
			require.True(t, errors.Is(l.Err(), ErrLost), "Err %v", l.Err())
		case <-time.After(5 * time.Second):
			t.Fatalf("%s flushed from two masters of three: Done silent 5 s later", l.Name())
		}
	}
}
