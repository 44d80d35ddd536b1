package quorum

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// TestAttackLossWatchCoversEveryNameOfAMultiNameLock: WithLossWatch listened on
// the first name of a multi-name lock only, and Verify read only that name: a
// force-expire of another name went unnoticed until the next extension, while a
// rival already held that name. Done must fire promptly, as for a plain lock.
func TestAttackLossWatchCoversEveryNameOfAMultiNameLock(t *testing.T) {
	a := newAtk(t, 5, redistest.Options{})
	m := a.client("holder")
	admin := a.client("admin")
	ctx := context.Background()
	l, err := m.takeMulti(ctx, []string{"a", "b"}, 5*time.Second, WithLossWatch())
	require.NoError(t, err)
	time.Sleep(100 * time.Millisecond) // the watch's subscription is up
	_, err = admin.forceExpire(ctx, "b", "")
	require.NoError(t, err)
	a.fault("force-expire b")
	rival, err := admin.TryAcquire(ctx, "b", 5*time.Second)
	require.NoError(t, err, "b is free after the force-expire")
	select {
	case <-l.Done():
		require.ErrorIs(t, l.Err(), ErrLost)
	case <-time.After(time.Second):
		t.Fatal("the holder of a and b did not learn within 1s that b was force-expired (a rival holds b)")
	}
	require.ErrorIs(t, l.Verify(ctx), ErrLost)
	require.NoError(t, rival.Release(ctx))
	_ = l.Release(ctx)
}

// TestAttackVerifyOfASharedHold: Verify read a shared hold's key with GET, which
// fails with WRONGTYPE on the holders' sorted set: a shared holder could never
// verify its hold, and one removed from the set was never told it had lost it.
func TestAttackVerifyOfASharedHold(t *testing.T) {
	a := newAtk(t, 5, redistest.Options{})
	m := a.client("holder")
	ctx := context.Background()
	l, err := m.Acquire(ctx, "rw", 5*time.Second, withShared())
	require.NoError(t, err)
	other, err := m.Acquire(ctx, "rw", 5*time.Second, withShared())
	require.NoError(t, err)
	require.NoError(t, l.Verify(ctx), "a live shared hold verifies")
	// The holder's member is removed on every master (an administrator's release
	// of that holder); the other holder stays.
	for _, s := range a.c.Servers {
		require.NoError(t, s.Client().ZRem(ctx, "lock:rw", l.Token()).Err())
	}
	require.ErrorIs(t, l.Verify(ctx), ErrLost)
	require.NoError(t, other.Verify(ctx))
	_ = l.Release(ctx)
	require.NoError(t, other.Release(ctx))
}
