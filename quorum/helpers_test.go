package quorum

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/keyspace"
	"github.com/redlock/redlock/internal/redistest"
)

// testCluster starts n real masters and returns them with a Manager over them
// (quarantine off unless opts turn it on: these masters are brand new).
func testCluster(t *testing.T, n int, opts ...Option) (*redistest.Cluster, *Manager) {
	t.Helper()
	c := redistest.Start(t, n, redistest.Options{})
	return c, managerFor(t, c, opts...)
}

func managerFor(t *testing.T, c *redistest.Cluster, opts ...Option) *Manager {
	t.Helper()
	nodes := make([]Node, len(c.Servers))
	for i, s := range c.Servers {
		nodes[i] = Node{Name: s.Name, Addr: s.Addr()}
	}
	base := []Option{WithRestartQuarantine(0), WithNodeTimeout(200 * time.Millisecond), WithRetry(3, 20*time.Millisecond, 10*time.Millisecond)}
	m, err := New(nodes, append(base, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	if goRedisAsked(opts) {
		useGoRedis(m)
	}
	return m
}

// keysOn returns, per server name, the value of key ("" when missing).
func keysOn(t *testing.T, c *redistest.Cluster, key string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, s := range c.Servers {
		v, err := s.Client().Get(context.Background(), key).Result()
		if err == nil {
			out[s.Name] = v
		}
	}
	return out
}

// slotOf is the slot of a permit held through withPermits (Permit.Slot).
func slotOf(l *Lock) int { return (&Permit{Lock: l}).Slot() }

// takeMulti is Manager.Multi(names...).Acquire: a caller's multi-name hold.
func (m *Manager) takeMulti(ctx context.Context, names []string, ttl time.Duration, opts ...LockOption) (*Lock, error) {
	mu, err := m.Multi(names...)
	if err != nil {
		return nil, err
	}
	return mu.Acquire(ctx, ttl, opts...)
}

// tryMulti is Manager.Multi(names...).TryAcquire.
func (m *Manager) tryMulti(ctx context.Context, names []string, ttl time.Duration, opts ...LockOption) (*Lock, error) {
	mu, err := m.Multi(names...)
	if err != nil {
		return nil, err
	}
	return mu.TryAcquire(ctx, ttl, opts...)
}

// namesOf returns the names l holds: every name of a multi-name hold, sorted;
// the one name of any other.
func namesOf(l *Lock) []string {
	if p, ok := l.prim.(*multiLock); ok {
		return append([]string(nil), p.names...)
	}
	return []string{l.name}
}

// kindOf says which primitive l holds, as the listing names it: keyspace.PrimMulti,
// keyspace.PrimSemaphore or keyspace.PrimShared, else keyspace.PrimLock (a plain lock, and a leadership's
// Lock, which is a plain lock of the election's leader key).
func kindOf(l *Lock) string {
	switch l.prim.(type) {
	case *multiLock:
		return keyspace.PrimMulti
	case *permitLock:
		return keyspace.PrimSemaphore
	case sharedLock:
		return keyspace.PrimShared
	}
	return keyspace.PrimLock
}

// withPermits makes an acquisition of Manager.Acquire take one of n permits of
// the name, as Semaphore(name, n) does: for tests that pass a primitive among
// other options.
func withPermits(n int) LockOption {
	return func(c *lockConfig) { c.permits, c.semaphore = n, true }
}

// withShared makes an acquisition of Manager.Acquire take a shared hold, as
// Shared(name) does.
func withShared() LockOption { return func(c *lockConfig) { c.shared = true } }
