package quorum

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/wire"
)

// TestSharedMembersReadThroughTheTransport: an administrator's read of a shared
// key's members (TIME, ZRANGE, PTTL on each master) goes through the Manager's
// transport and gives each member's time left, at most the key's TTL, hostile
// members as they are; a master holding another type fails with ErrWrongType
// and its name, a paused master is left out (nil) within the node timeout, and
// a cancellation while two masters are paused ends the read at once.
func TestSharedMembersReadThroughTheTransport(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3, WithNodeTimeout(time.Second))
	reads := countRounds(m, func(cmd *wire.Cmd) bool { return cmd.Script == sharedMembersScript })
	const key = "lock:members"
	hostile := "rl1.x\x1b[2J\r\n" + strings.Repeat("\x00", 100)
	far := float64(time.Now().Add(time.Hour).UnixMilli())
	for _, s := range c.Servers {
		require.NoError(t, s.Client().ZAdd(ctx, key,
			redis.Z{Score: far, Member: "rl1.a"},
			redis.Z{Score: 1, Member: "rl1.gone"},
			redis.Z{Score: 1e300, Member: hostile}).Err())
		require.NoError(t, s.Client().PExpire(ctx, key, 10*time.Second).Err())
	}
	_, rem, err := m.sharedMembers(ctx, key)
	require.NoError(t, err)
	assert.Positive(t, reads.Load(), "the read went through the transport")
	for i, left := range rem {
		require.Len(t, left, 2, "master %d: the expired member is not listed", i)
		assert.Greater(t, left["rl1.a"], time.Duration(0))
		assert.LessOrEqual(t, left["rl1.a"], 10*time.Second, "no longer than the key lives")
		assert.LessOrEqual(t, left[hostile], 10*time.Second)
		assert.Greater(t, left[hostile], time.Duration(0))
	}

	t.Run("a master paused", func(t *testing.T) {
		c.Servers[1].Stop()
		defer c.Servers[1].Cont()
		_, rem, err := m.sharedMembers(ctx, key)
		require.NoError(t, err)
		assert.Nil(t, rem[1])
		assert.Len(t, rem[0], 2)
	})

	t.Run("cancelled", func(t *testing.T) {
		c.Servers[0].Stop()
		c.Servers[1].Stop()
		defer c.Servers[0].Cont()
		defer c.Servers[1].Cont()
		cctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(50*time.Millisecond, cancel)
		_, _, err := m.sharedMembers(cctx, key)
		assert.ErrorIs(t, err, context.Canceled)
		assert.Contains(t, err.Error(), c.Servers[0].Name, "the error names the master")
	})

	t.Run("another type", func(t *testing.T) {
		for _, s := range c.Servers[:2] {
			require.NoError(t, s.Client().Del(ctx, key).Err())
			require.NoError(t, s.Client().Set(ctx, key, "x", time.Minute).Err())
		}
		_, rem, err := m.sharedMembers(ctx, key)
		require.Error(t, err)
		assert.ErrorIs(t, err, ErrWrongType)
		assert.Contains(t, err.Error(), c.Servers[0].Name, "the error names the master")
		assert.Nil(t, rem[0])
		assert.Len(t, rem[2], 2)
	})
}
