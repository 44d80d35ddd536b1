package quorum

// Attacks on a plain lock's release in its short form (release.lua given the lock
// key and the value only: it names NAME:queue and NAME:wake itself). What a user
// relies on is measured: how long after the release a waiter holds the lock (each
// waiter's retry delay is 10 s: a lost wake-up shows as a wait of seconds), Done,
// and the keys left on each master.

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/keyspace"
	"github.com/redlock/redlock/internal/redistest"
)

// waiterRetry is the waiters' retry delay: a wake-up lost costs this much.
const waiterRetry = 10 * time.Second

// wakeBound is how soon after a release a woken waiter holds the lock, generously
// (the machine is shared): far below waiterRetry. With a master paused, each of
// the waiter's rounds lasts its 1 s node timeout, and a wake-up that reaches the
// waiter before the release reached a quorum costs a failed round, its clean-up
// and the round that wins: about 3 s, seen on a loaded machine.
const wakeBound = 5 * time.Second

// managerVia is managerFor with each Node changed by mod (a proxy's Dialer, an ACL
// user).
func managerVia(t *testing.T, c *redistest.Cluster, mod func(i int, n *Node), opts ...Option) *Manager {
	t.Helper()
	nodes := make([]Node, len(c.Servers))
	for i, s := range c.Servers {
		nodes[i] = Node{Name: s.Name, Addr: s.Addr()}
		if mod != nil {
			mod(i, &nodes[i])
		}
	}
	base := []Option{WithRestartQuarantine(0), WithNodeTimeout(200 * time.Millisecond), WithRetry(3, 20*time.Millisecond, 10*time.Millisecond)}
	m, err := New(nodes, append(base, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// waiterOpts are the options of a waiter whose wake-ups are measured.
func waiterOpts() []Option {
	return []Option{WithRetry(1000, waiterRetry, 0), WithNodeTimeout(time.Second)}
}

// checkLeftKeys requires that no lock key of name is left on any master, and that
// whatever else of name is left (waiters' markers) has a TTL.
func checkLeftKeys(t *testing.T, c *redistest.Cluster, key string) { checkLeftKeysOf(t, c, key, false) }

// checkLeftKeysOf is checkLeftKeys; with partial, a lock key may be left where a
// release did not reach (a master paused or cut off then: ErrPartialRelease), with
// a TTL of at most a minute.
func checkLeftKeysOf(t *testing.T, c *redistest.Cluster, key string, partial bool) {
	t.Helper()
	ctx := context.Background()
	for _, s := range c.Servers {
		keys, err := s.Client().Keys(ctx, keyspace.EscapeGlob(key)+"*").Result()
		require.NoError(t, err)
		for _, k := range keys {
			if k == key {
				pttl := s.Client().PTTL(ctx, k).Val()
				if !partial || pttl <= 0 || pttl > time.Minute {
					t.Errorf("%s: the lock key %q is left (PTTL %v)", s.Name, k, pttl)
				}
				continue
			}
			if k == key+queueSuffix {
				typ := s.Client().Type(ctx, k).Val()
				if typ != "zset" {
					continue // a foreign key the test wrote
				}
			}
			pttl := s.Client().PTTL(ctx, k).Val()
			if pttl == -2 {
				continue // expired since it was listed
			}
			assert.Positive(t, pttl, "%s: %q is left without a TTL", s.Name, k)
		}
	}
}
