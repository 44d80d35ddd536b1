package quorum

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestArrayReadsOnTheWirePath: the reads whose replies are arrays (the
// election's, and the search of a permit by its token) run on the pipelined
// path: they find what the masters hold after every master's script cache was
// flushed between two calls (EVAL after NOSCRIPT) and with a master paused (the
// others make the quorum), and end when their context is cancelled while the
// masters that would make a quorum are paused, with an error naming them.
func TestArrayReadsOnTheWirePath(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3, WithNodeTimeout(3*time.Second))
	e, err := m.Election("arrays")
	require.NoError(t, err)
	ld, err := e.Campaign(ctx, "10.0.0.1:80", time.Minute)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ld.Release(context.Background()) })
	permits := takePermits(t, m, "arrays-sem", 3, time.Minute)
	ours := permits[2]
	flush := func() {
		for _, s := range c.Servers {
			require.NoError(t, s.Client().ScriptFlush(ctx).Err())
		}
	}
	for round := range 3 {
		flush()
		li, err := e.Leader(ctx)
		require.NoError(t, err, "round %d", round)
		assert.Equal(t, 3, li.Votes, "round %d", round)
		flush()
		_, rep, err := m.extendHeld(ctx, []string{"arrays-sem"}, ours.Token(), time.Minute)
		require.NoError(t, err, "round %d", round)
		assert.Equal(t, ours.Key(), rep.Key, "round %d: the permit's own slot", round)
		assert.Equal(t, 3, rep.Votes, "round %d", round)
	}

	t.Run("a master paused", func(t *testing.T) {
		flush()
		c.Servers[1].Stop()
		defer c.Servers[1].Cont()
		li, err := e.Leader(ctx)
		require.NoError(t, err)
		assert.Equal(t, 2, li.Votes)
		assert.Equal(t, "10.0.0.1:80", li.Value)
	})

	t.Run("cancelled", func(t *testing.T) {
		c.Servers[0].Stop()
		c.Servers[1].Stop()
		defer c.Servers[0].Cont()
		defer c.Servers[1].Cont()
		for _, read := range []func(ctx context.Context) error{
			func(ctx context.Context) error { _, err := e.Leader(ctx); return err },
			func(ctx context.Context) error {
				_, _, err := m.extendHeld(ctx, []string{"arrays-sem"}, ours.Token(), time.Minute)
				return err
			},
		} {
			cctx, cancel := context.WithCancel(ctx)
			time.AfterFunc(50*time.Millisecond, cancel)
			t0 := time.Now()
			err := read(cctx)
			require.Error(t, err)
			assert.True(t, errors.Is(err, context.Canceled), "%v", err)
			assert.Contains(t, err.Error(), c.Servers[0].Name, "the error names the master")
			assert.Less(t, time.Since(t0), 2*time.Second, "ended by the cancellation, not the 3 s node timeout")
		}
	})
}
