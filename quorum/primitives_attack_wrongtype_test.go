package quorum

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// TestAttackForeignHashOnThePrimitivesKeys: a Redisson-style HASH sits on the key
// of each primitive on two of five masters (WRONGTYPE for a string command). Each
// primitive still works on the other three, counts those two as held (never as
// taken by us, never an error that stops the round), and leaves the hashes as
// they were.
func TestAttackForeignHashOnThePrimitivesKeys(t *testing.T) {
	a := newAtk(t, 5, redistest.Options{})
	m := a.client("c")
	ctx := context.Background()
	keys := []string{"lock:rw", "lock:x", "lock:sem:permit:0", "lock:job:leader", "lock:job:leader:term"}
	for _, s := range a.c.Servers[:2] {
		for _, k := range keys {
			require.NoError(t, s.Client().HSet(ctx, k, "8f2c:1", "1").Err())
		}
	}
	a.fault("HASH on %v on a, b", keys)
	const ttl = 2 * time.Second

	// Shared: three masters grant it; the two hashes count as held.
	sh, err := m.TryAcquire(ctx, "rw", ttl, withShared())
	require.NoError(t, err)
	require.Equal(t, 3, sh.Votes().Votes)
	require.NoError(t, sh.Extend(ctx, ttl))
	// An exclusive acquisition is refused on all five.
	_, err = m.TryAcquire(ctx, "rw", ttl)
	require.ErrorIs(t, err, ErrNotAcquired)
	require.NoError(t, sh.Release(ctx))

	// Multi-name: the hash on x keeps x (and so the set) from a and b only.
	ml, err := m.tryMulti(ctx, []string{"x", "y"}, ttl)
	require.NoError(t, err)
	require.Equal(t, 3, ml.Votes().Votes)
	require.NoError(t, ml.Extend(ctx, ttl))
	require.NoError(t, ml.Release(ctx))

	// Semaphore: slot 0 is a hash on a and b, free on c, d, e.
	p1, err := m.TryAcquire(ctx, "sem", ttl, withPermits(2))
	require.NoError(t, err)
	p2, err := m.TryAcquire(ctx, "sem", ttl, withPermits(2))
	require.NoError(t, err)
	require.NotEqual(t, slotOf(p1), slotOf(p2))
	_, err = m.TryAcquire(ctx, "sem", ttl, withPermits(2))
	require.ErrorIs(t, err, ErrNotAcquired, "a third permit of two")
	// A permit's release, like a plain lock's, reports the hashes as per-master
	// WRONGTYPE errors (and deletes the permit where it is ours).
	for _, p := range []*Lock{p1, p2} {
		if err := p.Release(ctx); err != nil {
			require.ErrorIs(t, err, ErrWrongType)
		}
	}
	require.Empty(t, a.leftovers("lock:sem:permit:1"))

	// Election: the leadership and its record are hashes on a and b.
	e, err := m.Election("job")
	require.NoError(t, err)
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	ld, err := e.Campaign(cctx, "me", ttl)
	cancel()
	require.NoError(t, err)
	li, err := e.Leader(ctx)
	require.NoError(t, err)
	require.Equal(t, ld.Term(), li.Term)
	require.Equal(t, "me", li.Value)
	require.NoError(t, ld.Proclaim(ctx, "you"))
	if err := ld.Release(ctx); err != nil {
		require.ErrorIs(t, err, ErrWrongType)
	}
	_, err = e.Leader(ctx)
	require.ErrorIs(t, err, ErrNoLeader)

	for _, s := range a.c.Servers[:2] {
		for _, k := range keys {
			require.Equal(t, map[string]string{"8f2c:1": "1"}, s.Client().HGetAll(ctx, k).Val(), "%s on %s", k, s.Name)
		}
	}
}
