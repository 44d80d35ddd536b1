package quorum

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/wire"
)

// TestVerifyReadsThroughTheTransport: Lock.Verify (the read the loss watch
// decides by) sends its GET through the Manager's transport; a paused master
// costs it no more than the node timeout and no vote of the others; a
// cancellation while the masters that would make a quorum are paused ends it
// at once with an error naming them, and the lock is left as it is; hostile
// values (longer than the transport keeps, control characters) and a key of
// another type are another holder's, never ours: the lock is lost.
func TestVerifyReadsThroughTheTransport(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3, WithNodeTimeout(time.Second))
	gets := countRounds(m, func(cmd *wire.Cmd) bool {
		return cmd.Script == nil && len(cmd.Args) == 2 && cmd.Args[0] == "GET"
	})
	l, err := m.TryAcquire(ctx, "verify-wire", time.Minute)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Release(context.Background()) })
	require.NoError(t, l.Verify(ctx))
	assert.Positive(t, gets.Load(), "the GET went through the transport")

	t.Run("a master paused", func(t *testing.T) {
		c.Servers[1].Stop()
		defer c.Servers[1].Cont()
		t0 := time.Now()
		require.NoError(t, l.Verify(ctx), "two of three still hold it")
		assert.Less(t, time.Since(t0), 5*time.Second, "bounded by the node timeout")
		require.NoError(t, l.Err())
	})

	t.Run("cancelled", func(t *testing.T) {
		c.Servers[0].Stop()
		c.Servers[1].Stop()
		defer c.Servers[0].Cont()
		defer c.Servers[1].Cont()
		cctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(50*time.Millisecond, cancel)
		err := l.Verify(cctx)
		require.Error(t, err)
		assert.ErrorIs(t, err, context.Canceled)
		assert.ErrorIs(t, err, ErrUnavailable)
		assert.NotErrorIs(t, err, ErrLost)
		assert.Contains(t, err.Error(), c.Servers[0].Name, "the error names the master")
		require.NoError(t, l.Err(), "too few answers to tell: the lock is left as it is")
	})

	t.Run("hostile values and another type", func(t *testing.T) {
		long := l.Token() + strings.Repeat("\x1b[2J\r\n", 1000)
		require.NoError(t, c.Servers[0].Client().Set(ctx, l.Key(), long, time.Minute).Err())
		require.NoError(t, c.Servers[1].Client().Del(ctx, l.Key()).Err())
		require.NoError(t, c.Servers[1].Client().SAdd(ctx, l.Key(), l.Token()).Err())
		err := l.Verify(ctx)
		require.ErrorIs(t, err, ErrLost)
		assert.NotErrorIs(t, err, ErrWrongType, "a key of another type is another holder's")
		select {
		case <-l.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("Done did not fire")
		}
		assert.ErrorIs(t, l.Err(), ErrLost)
	})
}
