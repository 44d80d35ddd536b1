package quorum

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

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
