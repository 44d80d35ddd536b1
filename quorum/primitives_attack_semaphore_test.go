package quorum

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// TestAttackSemaphoreUnderNemesis: six clients take permits of a 2-permit
// semaphore (some kept alive, some fair, calls cancelled at random points) while
// the nemesis pauses, kills and restarts masters, flushes their script caches and
// breaks the clients' links. At no instant do more than 2 holders rely on a
// permit, Done fires no later than Until, and nothing is left once all is quiet.
func TestAttackSemaphoreUnderNemesis(t *testing.T) {
	a := newAtk(t, 5, atkAOFAlways)
	seed := atkSeed(t)
	const ttl = 300 * time.Millisecond
	a.rec.Limit("sem", 2)
	names, ms := a.clients("c", 6)
	a.workload(seed, ttl, 2*ttl, names, func(ctx context.Context, _ *rand.Rand, i int) (*Lock, string, error) {
		opts := []LockOption{withPermits(2)}
		if i%2 == 0 {
			opts = append(opts, WithKeepAlive(KeepAlive{}))
		}
		if i >= 4 {
			opts = append(opts, WithFair())
		}
		l, err := ms[i].Acquire(ctx, "sem", ttl, opts...)
		return l, "", err
	})
	time.Sleep(2 * ttl)
	if left := a.leftovers("lock:sem:permit:[0-9]*"); len(left) > 0 {
		t.Errorf("permits left after quiescence: %v", left)
	}
}

// TestAttackPermitReturnedAfterItsValidity: a permit round that took another
// slot somewhere, or that a master did not answer (a paused master), released the
// other slots before returning, waiting a whole node timeout more for the paused
// master: the permit came back with its validity already spent (Done fired as
// Acquire returned). The clean-up must not hold up the caller.
func TestAttackPermitReturnedAfterItsValidity(t *testing.T) {
	a := newAtk(t, 5, redistest.Options{})
	m := a.client("c0")
	ctx := context.Background()
	// Connections open and scripts loaded on every master first.
	l, err := m.TryAcquire(ctx, "sem", time.Second, withPermits(2))
	require.NoError(t, err)
	require.NoError(t, l.Release(ctx))

	a.c.Servers[4].Stop()
	a.fault("pause e")
	t.Cleanup(a.c.Servers[4].Cont)
	const ttl = 350 * time.Millisecond
	start := time.Now()
	l, err = m.TryAcquire(ctx, "sem", ttl, withPermits(2))
	returned := time.Now()
	require.NoError(t, err)
	t.Logf("round and return took %v; validity left on return %v", returned.Sub(start), l.Until().Sub(returned))
	require.True(t, returned.Before(l.Until()), "TryAcquire returned %v after the permit's validity ended", returned.Sub(l.Until()))
	require.Less(t, returned.Sub(start), 300*time.Millisecond, "TryAcquire waited for a clean-up round after a one-round acquisition")
	a.c.Servers[4].Cont()
	require.NoError(t, l.Release(ctx))
}
