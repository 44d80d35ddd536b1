package quorum

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// TestAttackScriptFlushWithAHungMaster: every master's script cache is flushed
// and one master is paused; each primitive's extension, verification and release
// still succeed on the other four (the fallback to EVAL costs no more than a
// round), and what they hold is deleted there.
func TestAttackScriptFlushWithAHungMaster(t *testing.T) {
	a := newAtk(t, 5, redistest.Options{})
	m := a.client("c")
	ctx := context.Background()
	const ttl = 3 * time.Second
	permit, err := m.TryAcquire(ctx, "sf/sem", ttl, withPermits(2))
	require.NoError(t, err)
	shared, err := m.TryAcquire(ctx, "sf/rw", ttl, withShared())
	require.NoError(t, err)
	multi, err := m.tryMulti(ctx, []string{"sf/a", "sf/b"}, ttl)
	require.NoError(t, err)
	e, err := m.Election("sf/job")
	require.NoError(t, err)
	ld, err := e.Campaign(ctx, "me", ttl)
	require.NoError(t, err)
	for _, s := range a.c.Servers {
		require.NoError(t, s.Client().ScriptFlush(ctx).Err())
	}
	a.c.Servers[4].Stop()
	a.fault("script flush everywhere, e paused")
	t.Cleanup(a.c.Servers[4].Cont)
	for _, l := range []*Lock{permit, shared, multi, ld.Lock} {
		t0 := time.Now()
		require.NoError(t, l.Extend(ctx, ttl), l.Name())
		require.Less(t, time.Since(t0), 400*time.Millisecond, "%s: extend took %v", l.Name(), time.Since(t0))
		require.NoError(t, l.Verify(ctx), l.Name())
	}
	_, err = e.Leader(ctx)
	require.NoError(t, err)
	require.NoError(t, ld.Proclaim(ctx, "you"))
	for _, l := range []*Lock{permit, shared, multi, ld.Lock} {
		err := l.Release(ctx)
		require.ErrorIs(t, err, ErrPartialRelease, "%s: e is paused", l.Name())
		require.ErrorContains(t, err, "master e", l.Name())
	}
	a.c.Servers[4].Cont()
	for _, s := range a.c.Servers[:4] {
		for _, k := range s.Keys(ctx) {
			require.Contains(t, []string{"lock:sf/job:leader:fence", "lock:sf/job:leader:term"}, k, "master %s", s.Name)
		}
	}
}
