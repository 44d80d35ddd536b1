package quorum

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/keyspace"
	"github.com/redlock/redlock/internal/wire"
)

// TestVerifyOfMultiAndSharedReadsThroughTheTransport: Lock.Verify of a
// multi-name lock and of a shared hold reads through the Manager's transport
// (a GET per name; a ZSCORE of the member and one of its tombstone) on every
// master; it still tells a master holding them (a paused master costs no vote
// of the others) from one where a name holds a hostile value or a key of
// another type (another holder's) and from one holding the tombstone (a
// revocation: ErrRevoked), also after every master's script cache was
// flushed; a cancellation while two masters are paused ends it at once,
// leaving the lock as it is.
func TestVerifyOfMultiAndSharedReadsThroughTheTransport(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3, WithNodeTimeout(time.Second))
	var mu sync.Mutex
	sent := map[string]int{}
	wrapRounder(m, func(cmd *wire.Cmd) (*wire.Cmd, func(*wire.Result)) {
		if cmd.Script == nil && cmd.Only == nil && len(cmd.Args) > 0 {
			mu.Lock()
			sent[cmd.Args[0]]++
			mu.Unlock()
		}
		return cmd, nil
	})
	mn, err := m.Multi("vw-a", "vw-b")
	require.NoError(t, err)
	multi, err := mn.TryAcquire(ctx, time.Minute)
	require.NoError(t, err)
	shared, err := m.TryAcquire(ctx, "vw-s", time.Minute, withShared())
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = multi.Release(context.Background())
		_ = shared.Release(context.Background())
	})
	for _, l := range []*Lock{multi, shared} {
		require.NoError(t, l.Verify(ctx), "%s", l.Name())
	}
	mu.Lock()
	assert.Positive(t, sent["GET"], "the multi-name lock's GETs went through the transport")
	assert.Positive(t, sent["ZSCORE"], "the shared hold's ZSCOREs went through the transport")
	mu.Unlock()

	t.Run("script caches flushed", func(t *testing.T) {
		for _, s := range c.Servers {
			require.NoError(t, s.Client().ScriptFlush(ctx).Err())
		}
		for _, l := range []*Lock{multi, shared} {
			require.NoError(t, l.Verify(ctx), "%s: no script to load again", l.Name())
		}
		for _, s := range c.Servers {
			require.NoError(t, s.Client().ScriptFlush(ctx).Err())
		}
		_, rem, err := m.sharedMembers(ctx, shared.Key())
		require.NoError(t, err)
		assert.Contains(t, rem[0], shared.Token())
	})

	t.Run("a master paused", func(t *testing.T) {
		c.Servers[2].Stop()
		defer c.Servers[2].Cont()
		for _, l := range []*Lock{multi, shared} {
			require.NoError(t, l.Verify(ctx), "%s", l.Name())
		}
	})

	t.Run("cancelled", func(t *testing.T) {
		c.Servers[0].Stop()
		c.Servers[1].Stop()
		defer c.Servers[0].Cont()
		defer c.Servers[1].Cont()
		for _, l := range []*Lock{multi, shared} {
			cctx, cancel := context.WithCancel(ctx)
			time.AfterFunc(50*time.Millisecond, cancel)
			err := l.Verify(cctx)
			assert.ErrorIs(t, err, context.Canceled, "%s", l.Name())
			assert.ErrorIs(t, err, ErrUnavailable, "%s", l.Name())
			assert.Contains(t, err.Error(), c.Servers[0].Name, "the error names the master")
			require.NoError(t, l.Err(), "%s: too few answers to tell", l.Name())
		}
	})

	t.Run("another holder's and revoked", func(t *testing.T) {
		hostile := multi.Token() + strings.Repeat("\x1b[2J\r\n", 1000)
		keys := multi.prim.(*multiLock).keys
		cl := func(i int) *redis.Client { return c.Servers[i].Client() }
		require.NoError(t, cl(0).Set(ctx, keys[1], hostile, time.Minute).Err())
		require.NoError(t, cl(1).Del(ctx, keys[0]).Err())
		require.NoError(t, cl(1).SAdd(ctx, keys[0], multi.Token()).Err())
		require.NoError(t, cl(2).Set(ctx, keys[1], keyspace.Tombstone(multi.Token()), time.Minute).Err())
		err := multi.Verify(ctx)
		assert.ErrorIs(t, err, ErrLost)
		assert.ErrorIs(t, err, ErrRevoked, "a name holds the tombstone on a master")

		k := shared.Key()
		require.NoError(t, cl(0).ZRem(ctx, k, shared.Token()).Err())
		require.NoError(t, cl(1).Del(ctx, k).Err())
		require.NoError(t, cl(1).Set(ctx, k, hostile, time.Minute).Err())
		require.NoError(t, cl(2).ZRem(ctx, k, shared.Token()).Err())
		err = shared.Verify(ctx)
		assert.ErrorIs(t, err, ErrLost)
		assert.NotErrorIs(t, err, ErrRevoked, "no tombstone anywhere")
		require.NoError(t, cl(0).ZAdd(ctx, k, redis.Z{Score: 1, Member: keyspace.Tombstone(shared.Token())}).Err())
		// The lock is lost already; a second read still tells the revocation.
		assert.ErrorIs(t, shared.Verify(ctx), ErrRevoked)
		for _, l := range []*Lock{multi, shared} {
			select {
			case <-l.Done():
			case <-time.After(5 * time.Second):
				t.Fatalf("%s: Done did not fire", l.Name())
			}
		}
	})
}
