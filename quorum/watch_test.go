package quorum

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLossWatchNoticesForceExpireAtOnce(t *testing.T) {
	c, m := testCluster(t, 3)
	admin := managerFor(t, c)
	ctx := context.Background()
	l, err := m.TryAcquire(ctx, "watched", 30*time.Second, WithLossWatch())
	require.NoError(t, err)
	// Let the watch read the key on every master before the force-expire.
	armed(t, m, l)
	t0 := time.Now()
	_, err = admin.forceExpire(ctx, "watched", "")
	require.NoError(t, err)
	select {
	case <-l.Done():
		t.Logf("Done %v after the force-expire", time.Since(t0))
	case <-time.After(2 * time.Second):
		t.Fatal("the holder did not notice the force-expire")
	}
	assert.Less(t, time.Since(t0), 200*time.Millisecond)
	assert.ErrorIs(t, l.Err(), ErrLost)
}

func TestVerify(t *testing.T) {
	c, m := testCluster(t, 3)
	ctx := context.Background()
	l, err := m.TryAcquire(ctx, "verify", 30*time.Second)
	require.NoError(t, err)
	require.NoError(t, l.Verify(ctx))
	require.NoError(t, l.Err())
	require.NoError(t, c.Servers[0].Client().Set(ctx, l.Key(), "rl1.other", time.Minute).Err())
	require.NoError(t, l.Verify(ctx), "still ours on 2 of 3")
	require.NoError(t, c.Servers[1].Client().Del(ctx, l.Key()).Err())
	err = l.Verify(ctx)
	require.ErrorIs(t, err, ErrLost)
	assert.ErrorIs(t, l.Err(), ErrLost, "the context is cancelled")
}

// A MaxHold shorter than the TTL is enforced by shortening the TTL at once: Until
// ends by acquisition + MaxHold, and Capped says why.
func TestKeepAliveMaxHoldBelowTTL(t *testing.T) {
	_, m := testCluster(t, 3)
	ctx := context.Background()
	start := time.Now()
	l, err := m.TryAcquire(ctx, "short-hold", 3*time.Second, WithKeepAlive(KeepAlive{MaxHold: 500 * time.Millisecond}))
	require.NoError(t, err)
	assert.Nil(t, l.Capped())
	select {
	case <-l.UntilChanged():
	case <-time.After(time.Second):
		t.Fatal("the TTL was not shortened")
	}
	require.Eventually(t, func() bool { return l.Capped() != nil }, time.Second, time.Millisecond)
	assert.ErrorIs(t, l.Capped(), ErrExtensionCap)
	assert.False(t, l.Until().After(start.Add(500*time.Millisecond)), "Until %v after start", l.Until().Sub(start))
	<-l.Done()
	assert.ErrorIs(t, l.Err(), ErrExtensionCap)
	assert.Less(t, time.Since(start), time.Second)
}
