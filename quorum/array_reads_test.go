package quorum

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/wire"
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

// TestScriptReadsAndFairCleanUpGoThroughTheTransport: the election's read, the
// search of a permit by its token, a fair waiter's leave and its unwind are sent
// through the Manager's transport (the pipelined wire path), not beside it; the
// unwind only to the masters where the failed round may have set the key: a
// master that refused it keeps the key it holds.
func TestScriptReadsAndFairCleanUpGoThroughTheTransport(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3)
	var mu sync.Mutex
	sent := map[string][]bool{} // script hash -> Only
	wrapRounder(m, func(cmd *wire.Cmd) (*wire.Cmd, func(*wire.Result)) {
		if cmd.Script != nil {
			mu.Lock()
			sent[cmd.Script.Hash()] = append([]bool(nil), cmd.Only...)
			mu.Unlock()
		}
		return cmd, nil
	})
	e, err := m.Election("through")
	require.NoError(t, err)
	ld, err := e.Campaign(ctx, "v", time.Minute)
	require.NoError(t, err)
	_, err = e.Leader(ctx)
	require.NoError(t, err)
	require.NoError(t, ld.Release(ctx))
	permits := takePermits(t, m, "through-sem", 2, time.Minute)
	_, _, err = m.extendHeld(ctx, []string{"through-sem"}, permits[1].Token(), time.Minute)
	require.NoError(t, err)

	const key = "lock:through-fair"
	for _, s := range c.Servers {
		require.NoError(t, s.Client().Set(ctx, key, "ours", time.Minute).Err())
	}
	w := &fairWaiter{id: "w1", mode: "wait", score: "100", hbMS: "60000"}
	refused := &Report{Nodes: []NodeResult{{Outcome: OutcomeError}, {Outcome: OutcomeForeign}, {Outcome: OutcomeOK}}}
	m.unwind(ctx, key, "ours", w, refused)
	m.leave(ctx, key, w)
	for i, s := range c.Servers {
		n, err := s.Client().Exists(ctx, key).Result()
		require.NoError(t, err)
		assert.Equal(t, int64(map[bool]int{true: 1}[i == 1]), n, "master %d: unwound only where the round was not refused", i)
	}

	mu.Lock()
	defer mu.Unlock()
	for name, h := range map[string]string{"elect_read": electReadScript.Hash(), "sem_find": semFindScript.Hash(), "fair_leave": fairLeaveScript.Hash()} {
		only, ok := sent[h]
		assert.True(t, ok, "%s went through the transport", name)
		assert.Nil(t, only, "%s went to every master", name)
	}
	assert.Equal(t, []bool{true, false, true}, sent[fairUnwindScript.Hash()], "fair_unwind went to the masters that did not refuse")
}
