package quorum

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Regression: a lock whose key another client replaced on a majority with a
// value of another type (a ZSET) was reported unavailable on extend, as if the
// masters were down: the extend script's GET fails with WRONGTYPE. Such a key is
// not ours: extend says ErrLost (and Done fires), release ends without error on
// the masters that still held ours and names no master as down.
func TestExtendOfAKeyReplacedByAnotherTypeIsLost(t *testing.T) {
	c, m := testCluster(t, 5)
	ctx := context.Background()
	l, err := m.TryAcquire(ctx, "wt", 10*time.Second)
	require.NoError(t, err)
	for _, s := range c.Servers[:3] {
		cl := s.Client()
		require.NoError(t, cl.Del(ctx, "lock:wt").Err())
		require.NoError(t, cl.ZAdd(ctx, "lock:wt", redis.Z{Score: 1, Member: "other"}).Err())
	}
	err = l.Extend(ctx, 10*time.Second)
	require.ErrorIs(t, err, ErrLost)
	assert.NotErrorIs(t, err, ErrUnavailable)
	select {
	case <-l.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done did not fire after the lock was lost")
	}
	for _, s := range c.Servers[:3] {
		typ, err := s.Client().Type(ctx, "lock:wt").Result()
		require.NoError(t, err)
		assert.Equal(t, "zset", typ, "another client's key is left alone")
	}
}
