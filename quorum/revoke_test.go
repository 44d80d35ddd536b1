package quorum

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redlock/redlock/internal/keyspace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// holdKind takes one kind of hold of name with a loss watch, and revokes what
// it holds as force-expire does (every key of it, compare-and-swap on its
// token).
type holdKind struct {
	kind   string
	take   func(ctx context.Context, m *Manager, name string, ttl time.Duration) (*Lock, error)
	revoke func(ctx context.Context, admin *Manager, l *Lock) (time.Time, error)
	// rival is an acquisition that conflicts with the hold, waiting up to wait:
	// the same kind, or an exclusive lock of a shared hold's name.
	rival func(ctx context.Context, m *Manager, name string, wait time.Duration) (*Lock, error)
}

// plainRival waits up to wait for the plain lock name.
func plainRival(ctx context.Context, m *Manager, name string, wait time.Duration) (*Lock, error) {
	return m.Acquire(ctx, name, 30*time.Second, WithWait(wait))
}

// seenEverywhere is what an operator sees of token on every master of m.
func seenEverywhere(m *Manager, token string) map[string]keyspace.Seen {
	seen := map[string]keyspace.Seen{}
	for _, n := range m.Nodes() {
		seen[n] = keyspace.Seen{Type: "string", Value: token}
	}
	return seen
}

// revokeKeys revokes token on each listed key.
func revokeKeys(ctx context.Context, admin *Manager, token string, listed ...string) (time.Time, error) {
	var free time.Time
	for _, k := range listed {
		at, _, err := admin.revokeListed(ctx, k, seenEverywhere(admin, token))
		if err != nil {
			return time.Time{}, err
		}
		free = later(free, at)
	}
	return free, nil
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

var holdKinds = []holdKind{
	{"mutex",
		func(ctx context.Context, m *Manager, name string, ttl time.Duration) (*Lock, error) {
			return m.TryAcquire(ctx, name, ttl, WithLossWatch())
		},
		func(ctx context.Context, admin *Manager, l *Lock) (time.Time, error) {
			free, _, err := admin.revokeToken(ctx, l.Name(), l.Token())
			return free, err
		}, plainRival},
	{"permit",
		func(ctx context.Context, m *Manager, name string, ttl time.Duration) (*Lock, error) {
			return m.TryAcquire(ctx, name, ttl, withPermits(1), WithLossWatch())
		},
		func(ctx context.Context, admin *Manager, l *Lock) (time.Time, error) {
			return revokeKeys(ctx, admin, l.Token(), strings.TrimPrefix(l.Key(), admin.Key("")))
		},
		func(ctx context.Context, m *Manager, name string, wait time.Duration) (*Lock, error) {
			return m.Acquire(ctx, name, 30*time.Second, withPermits(1), WithWait(wait))
		}},
	{"multi",
		func(ctx context.Context, m *Manager, name string, ttl time.Duration) (*Lock, error) {
			return m.tryMulti(ctx, []string{name, name + "-b"}, ttl, WithLossWatch())
		},
		func(ctx context.Context, admin *Manager, l *Lock) (time.Time, error) {
			names := strings.Fields(l.Name())
			return revokeKeys(ctx, admin, l.Token(), names...)
		},
		func(ctx context.Context, m *Manager, name string, wait time.Duration) (*Lock, error) {
			return m.takeMulti(ctx, []string{name, name + "-b"}, 30*time.Second, WithWait(wait))
		}},
	{"shared",
		func(ctx context.Context, m *Manager, name string, ttl time.Duration) (*Lock, error) {
			return m.TryAcquire(ctx, name, ttl, withShared(), WithLossWatch())
		},
		func(ctx context.Context, admin *Manager, l *Lock) (time.Time, error) {
			free, _, err := admin.revokeShared(ctx, l.Name(), l.Token())
			return free, err
		}, plainRival},
	{"leader",
		func(ctx context.Context, m *Manager, name string, ttl time.Duration) (*Lock, error) {
			e, err := m.Election(name)
			if err != nil {
				return nil, err
			}
			ld, err := e.Campaign(ctx, "me", ttl, WithLossWatch())
			if err != nil {
				return nil, err
			}
			return ld.Lock, nil
		},
		func(ctx context.Context, admin *Manager, l *Lock) (time.Time, error) {
			return revokeKeys(ctx, admin, l.Token(), strings.TrimPrefix(l.Key(), admin.Key("")))
		},
		func(ctx context.Context, m *Manager, name string, wait time.Duration) (*Lock, error) {
			wctx, cancel := context.WithTimeout(ctx, wait)
			defer cancel()
			e, err := m.Election(name)
			if err != nil {
				return nil, err
			}
			ld, err := e.Campaign(wctx, "rival", 30*time.Second)
			if err != nil {
				return nil, err
			}
			return ld.Lock, nil
		}},
}

// A live holder revoked hears it (Done, ErrRevoked with ErrLost), its next
// extension fails, and its release removes the tombstone: the next acquirer of
// the same kind gets the name at once, long before the revoked validity ends.
func TestRevokeLiveHolderHearsAndItsReleaseFreesTheName(t *testing.T) {
	for _, k := range holdKinds {
		t.Run(k.kind, func(t *testing.T) {
			c, m := testCluster(t, 3)
			admin := managerFor(t, c)
			ctx := context.Background()
			name := "revoked-" + k.kind
			l, err := k.take(ctx, m, name, 30*time.Second)
			require.NoError(t, err)
			armed(t, m, l)
			t0 := time.Now()
			free, err := k.revoke(ctx, admin, l)
			require.NoError(t, err)
			assert.Greater(t, time.Until(free), 25*time.Second, "the lock-delay lasts the revoked validity")
			select {
			case <-l.Done():
				t.Logf("Done %v after the revocation started", time.Since(t0))
			case <-time.After(3 * time.Second):
				t.Fatal("the holder did not hear its revocation")
			}
			assert.ErrorIs(t, l.Err(), ErrRevoked)
			assert.ErrorIs(t, l.Err(), ErrLost)
			_, _, err = l.extendRound(ctx, 30*time.Second)
			assert.ErrorIs(t, err, ErrLost, "an extension fails on the tombstone")
			if l.prim == nil { // a plain lock's extension reads the tombstone
				assert.ErrorIs(t, err, ErrRevoked)
			}

			if k.kind == "shared" {
				// Every master holds the revoked holder's tombstone, and nothing else,
				// until the lock-delay ends (admin's
				// TestRevokedSharedHolderListsAsItsTombstone checks what a listing shows).
				_, members, err := admin.sharedMembers(ctx, admin.Key(name))
				require.NoError(t, err)
				for _, left := range members {
					require.Len(t, left, 1, "a tombstone holds nothing")
					for v, d := range left {
						assert.Equal(t, keyspace.Tombstone(l.Token()), v)
						assert.WithinDuration(t, free, time.Now().Add(d), 2*time.Second)
					}
				}
			}
			// Taken while revoked: no rival gets it.
			other := managerFor(t, c)
			_, err = k.rival(ctx, other, name, 300*time.Millisecond)
			require.ErrorIs(t, err, ErrNotAcquired, "the tombstone keeps the name taken")

			t0 = time.Now()
			_ = l.Release(ctx) // the acknowledgement
			next, err := k.rival(ctx, other, name, 5*time.Second)
			require.NoError(t, err, "free at once after the revoked holder's release")
			assert.Less(t, time.Since(t0), 5*time.Second)
			t.Logf("the rival got it %v after the revoked holder's release started", time.Since(t0))
			require.NoError(t, next.Release(ctx))
		})
	}
}

// A holder that never answers (frozen: no loss watch, no release) keeps the
// name taken until its validity has surely ended: no acquirer, of any kind,
// gets it before the revoked holder's Until; a waiting one gets it after.
func TestRevokeGoneHolderKeepsTheNameUntilItsValidityEnds(t *testing.T) {
	for _, k := range holdKinds {
		t.Run(k.kind, func(t *testing.T) {
			c, m := testCluster(t, 3)
			admin := managerFor(t, c)
			ctx := context.Background()
			name := "frozen-" + k.kind
			l, err := k.take(ctx, m, name, 1500*time.Millisecond)
			require.NoError(t, err)
			until := l.Until()
			// The holder is gone: it hears nothing, releases nothing.
			m.Close()
			free, err := k.revoke(ctx, admin, l)
			require.NoError(t, err)
			assert.False(t, free.Before(until), "free at %v before the holder's Until %v", free, until)
			other := managerFor(t, c)
			wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			next, err := k.rival(wctx, other, name, 10*time.Second)
			got := time.Now()
			require.NoError(t, err)
			assert.True(t, got.After(until), "acquired %v before the revoked holder's Until", until.Sub(got))
			_ = next.Release(ctx)
		})
	}
}

// A release never removes a tombstone that is not its own value's; a
// revocation is a compare-and-swap on the value shown: a key that changed
// hands since is not touched.
func TestRevokeTouchesOnlyWhatItWasShown(t *testing.T) {
	c, m := testCluster(t, 3)
	ctx := context.Background()
	a, err := m.TryAcquire(ctx, "cas", 30*time.Second)
	require.NoError(t, err)
	stale := a.Token()
	require.NoError(t, a.Release(ctx))
	b, err := m.TryAcquire(ctx, "cas", 30*time.Second)
	require.NoError(t, err)
	_, rep, err := m.revokeToken(ctx, "cas", stale)
	require.NoError(t, err)
	assert.Equal(t, 0, rep.Votes)
	assert.Equal(t, 3, rep.count(OutcomeForeign), "changed since it was shown: kept")
	for srv, v := range keysOn(t, c, b.Key()) {
		assert.Equal(t, b.Token(), v, "%s: the new holder untouched", srv)
	}
	require.NoError(t, b.Verify(ctx))

	// b revoked: a release of any other value leaves b's tombstone alone.
	_, _, err = m.revokeToken(ctx, "cas", b.Token())
	require.NoError(t, err)
	_, err = m.releaseToken(ctx, "cas", stale)
	require.NoError(t, err)
	for srv, v := range keysOn(t, c, b.Key()) {
		assert.Equal(t, keyspace.Tombstone(b.Token()), v, "%s: the tombstone of b's value stays", srv)
	}
	// A revocation of the tombstone itself writes no tombstone of a tombstone,
	// and says until when the name stays taken.
	free, rep, err := m.revokeToken(ctx, "cas", keyspace.Tombstone(b.Token()))
	require.NoError(t, err)
	assert.Equal(t, 3, rep.count(OutcomeMissing))
	assert.WithinDuration(t, time.Now().Add(30*time.Second), free, 2*time.Second)
	// The tombstone is a plain string with a TTL, as a foreign SET NX sees it.
	s := c.Servers[0].Client()
	ok, err := s.SetNX(ctx, b.Key(), "foreign", time.Minute).Result()
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Greater(t, s.PTTL(ctx, b.Key()).Val(), 25*time.Second)
	// The listing shows it revoked, free when the longest tombstone ends.
	lst, err := m.inspect(ctx, "cas")
	require.NoError(t, err)
	li := lst.Lock("cas")
	require.NotNil(t, li)
	assert.Equal(t, stateRevoked, li.State)
	assert.WithinDuration(t, time.Now().Add(30*time.Second), li.FreeAt, 2*time.Second)
}

// Redis computes the tombstone as this package does.
func TestTombstoneMatchesTheScripts(t *testing.T) {
	c, m := testCluster(t, 1)
	ctx := context.Background()
	require.NoError(t, c.Servers[0].Client().Set(ctx, m.Key("t"), "v\x00\xff", time.Minute).Err())
	_, _, err := m.revokeToken(ctx, "t", "v\x00\xff")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{c.Servers[0].Name: keyspace.Tombstone("v\x00\xff")}, keysOn(t, c, m.Key("t")))
	assert.True(t, keyspace.IsTombstone(keyspace.Tombstone("x")))
	assert.False(t, keyspace.IsTombstone("rl1x.nothex"))
}
