package quorum

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/faults"
	"github.com/redlock/redlock/internal/keyspace"
	"github.com/redlock/redlock/internal/redistest"
)

// writePauseKinds are holds taken without a loss watch: only the test's
// Verify reads them.
var writePauseKinds = []struct {
	name string
	take func(t *testing.T, m *Manager) *Lock
}{
	{"mutex", func(t *testing.T, m *Manager) *Lock {
		l, err := m.TryAcquire(context.Background(), "wp", time.Minute)
		require.NoError(t, err)
		return l
	}},
	{"multi", func(t *testing.T, m *Manager) *Lock {
		l, err := m.tryMulti(context.Background(), []string{"wp-a", "wp-b"}, time.Minute)
		require.NoError(t, err)
		return l
	}},
	{"shared", func(t *testing.T, m *Manager) *Lock {
		l, err := m.TryAcquire(context.Background(), "wp", time.Minute, withShared())
		require.NoError(t, err)
		return l
	}},
}

// writePaused takes a hold of kind k on three masters, removes it from two
// and pauses the writes of the first of those (CLIENT PAUSE WRITE, undone at
// the end of t).
func writePaused(t *testing.T, take func(t *testing.T, m *Manager) *Lock) (*Manager, *Lock) {
	c, m := testCluster(t, 3, WithNodeTimeout(time.Second))
	ctx := context.Background()
	l := take(t, m)
	require.NoError(t, l.Verify(ctx))
	for _, s := range c.Servers[:2] {
		require.NoError(t, s.Client().Del(ctx, l.watchKeys()...).Err())
	}
	paused := c.Servers[0]
	require.NoError(t, faults.ClientPause(ctx, paused, 10*time.Second, "WRITE"))
	t.Cleanup(func() { _ = paused.Client().Do(context.Background(), "CLIENT", "UNPAUSE").Err() })
	return m, l
}

// lostSoon checks that l's Done fires with ErrLost.
func lostSoon(t *testing.T, l *Lock) {
	t.Helper()
	select {
	case <-l.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done did not fire")
	}
	require.ErrorIs(t, l.Err(), ErrLost)
}

// TestBugVerifyOfMultiAndSharedStallsOnAWritePausedMaster: Lock.Verify read a
// multi-name lock's and a shared hold's keys with Lua scripts, which a master
// whose writes are paused (CLIENT PAUSE WRITE, as FAILOVER does) holds back
// like writes until the pause ends, while it answers reads at once. With the
// value gone from two masters of three, one of them write-paused, Verify waited
// the node timeout for that master and could not tell (ErrUnavailable) where a
// plain lock's GET heard its loss: the holder went on with a lock a quorum no
// longer holds, for as long as the pause lasts. Verify must read as a plain
// lock's does, with read commands that a write pause does not hold back.
func TestBugVerifyOfMultiAndSharedStallsOnAWritePausedMaster(t *testing.T) {
	for _, k := range writePauseKinds {
		t.Run(k.name, func(t *testing.T) {
			_, l := writePaused(t, k.take)
			require.ErrorIs(t, l.Verify(context.Background()), ErrLost, "the write-paused master answers reads: two masters of three lack the value")
			lostSoon(t, l)
		})
	}
}

// TestBugVerifyWaitsBehindAWriteOnAWritePausedMaster: Lock.Verify's reads
// shared the hot commands' connection to each master, where a master whose
// writes are paused holds back the acquisitions and releases the Manager sends
// meanwhile, and every command written behind them: the read waited the node
// timeout there, and Verify could not tell (ErrUnavailable, measured: 4 of 5
// verifications) a loss on two masters of three while the Manager took other
// locks. Verify's reads must not wait behind a write.
func TestBugVerifyWaitsBehindAWriteOnAWritePausedMaster(t *testing.T) {
	for _, k := range writePauseKinds {
		t.Run(k.name, func(t *testing.T) {
			m, l := writePaused(t, k.take)
			ctx, stop := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			wg.Go(func() { // other locks taken on the same Manager: writes held back
				for i := 0; ctx.Err() == nil; i++ {
					if o, err := m.TryAcquire(ctx, fmt.Sprintf("wp-other/%d", i), time.Second); err == nil {
						_ = o.Release(ctx)
					}
				}
			})
			defer wg.Wait()
			defer stop()
			time.Sleep(50 * time.Millisecond) // a write is held back on the paused master
			for range 3 {
				require.ErrorIs(t, l.Verify(context.Background()), ErrLost, "the write-paused master answers reads: two masters of three lack the value")
			}
			lostSoon(t, l)
		})
	}
}

// TestVerifyUnderTheDocumentedACL: the lock user of docs/acl.md may run
// Verify's reads for every kind of hold: held, Verify says so; gone from two
// masters of three, ErrLost; the tombstone there, ErrRevoked too; and the
// masters refused it nothing (ACL LOG).
func TestVerifyUnderTheDocumentedACL(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t, 3, redistest.Options{})
	for _, s := range c.Servers {
		require.NoError(t, s.Client().Do(ctx, docACL(t, "locker")...).Err())
	}
	m := managerVia(t, c, func(_ int, n *Node) { n.Username, n.Password = "locker", "pw" }, WithNodeTimeout(time.Second))
	for _, k := range verifyKinds {
		for _, revoke := range []bool{false, true} {
			l := k.take(t, m, fmt.Sprintf("acl/%s/%v", k.name, revoke))
			require.NoError(t, l.Verify(ctx), "%s", k.name)
			for _, s := range c.Servers[:2] {
				for _, key := range k.keys(l) {
					var err error
					switch {
					case revoke && k.member:
						err = swapMember(keyspace.Tombstone)(ctx, s.Client(), key, l.Token())
					case revoke:
						err = s.Client().Set(ctx, key, keyspace.Tombstone(l.Token()), time.Minute).Err()
					default:
						err = s.Client().Del(ctx, key).Err()
					}
					require.NoError(t, err)
				}
			}
			err := l.Verify(ctx)
			require.ErrorIs(t, err, ErrLost, "%s", k.name)
			require.Equal(t, revoke, errors.Is(err, ErrRevoked), "%s: revoked", k.name)
		}
	}
	for _, s := range c.Servers {
		n, err := s.Client().Do(ctx, "ACL", "LOG").Slice()
		require.NoError(t, err)
		require.Empty(t, n, "%s refused the lock user something", s.Name)
	}
}
