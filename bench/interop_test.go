package bench

import (
	"context"
	"testing"
	"time"

	"github.com/go-redsync/redsync/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/quorum"
)

// A lock taken by redsync blocks quorum and the other way round, on the same keys
// (quorum's default prefix "lock:"). It lives here, beside the benchmarks, so that
// redsync stays out of the main module's requirements.
func TestInteropWithRedsyncBothWays(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t, 5, redistest.Options{})
	m := benchManager(t, c.Addrs())
	rs := redsyncPools(t, c.Addrs())

	mu := rs.NewMutex("lock:shared", redsync.WithExpiry(5*time.Second), redsync.WithTries(1))
	require.NoError(t, mu.LockContext(ctx))
	_, err := m.TryAcquire(ctx, "shared", time.Second)
	assert.ErrorIs(t, err, quorum.ErrHeld, "a redsync lock blocks quorum")
	_, err = mu.UnlockContext(ctx)
	require.NoError(t, err)

	l, err := m.TryAcquire(ctx, "shared", 5*time.Second)
	require.NoError(t, err)
	mu2 := rs.NewMutex("lock:shared", redsync.WithExpiry(5*time.Second), redsync.WithTries(1))
	assert.Error(t, mu2.LockContext(ctx), "a quorum lock blocks redsync")
	require.NoError(t, l.Release(ctx))
	require.NoError(t, mu2.LockContext(ctx))
	_, _ = mu2.UnlockContext(ctx)
}
