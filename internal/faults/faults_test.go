package faults

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

func clientVia(t *testing.T, p *Proxy) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: p.Upstream(), Dialer: p.Dial, Protocol: 2, DisableIdentity: true,
		MaxRetries: -1, ContextTimeoutEnabled: true, DialTimeout: 200 * time.Millisecond, DialerRetries: 1})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestProxyFaults(t *testing.T) {
	s := redistest.StartOne(t, "a", redistest.Options{})
	direct := s.Client()
	ctx := context.Background()
	tests := []struct {
		name  string
		fault func(p *Proxy)
		check func(t *testing.T, c *redis.Client, key string)
	}{
		{"forwards", func(*Proxy) {}, func(t *testing.T, c *redis.Client, key string) {
			require.NoError(t, c.Set(ctx, key, "v", 0).Err())
			assert.Equal(t, "v", direct.Get(ctx, key).Val())
		}},
		{"latency", func(p *Proxy) { p.SetLatency(0, 60*time.Millisecond) }, func(t *testing.T, c *redis.Client, key string) {
			t0 := time.Now()
			require.NoError(t, c.Ping(ctx).Err())
			assert.GreaterOrEqual(t, time.Since(t0), 60*time.Millisecond)
		}},
		{"blackhole drops commands", func(p *Proxy) { p.Blackhole() }, func(t *testing.T, c *redis.Client, key string) {
			cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
			defer cancel()
			require.Error(t, c.Set(cctx, key, "v", 0).Err())
			time.Sleep(50 * time.Millisecond)
			assert.Zero(t, direct.Exists(ctx, key).Val(), "not applied")
		}},
		{"lost replies apply writes", func(p *Proxy) { p.LoseReplies() }, func(t *testing.T, c *redis.Client, key string) {
			cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
			defer cancel()
			require.Error(t, c.Set(cctx, key, "v", 0).Err())
			assert.Equal(t, "v", direct.Get(ctx, key).Val(), "applied")
		}},
		{"stop refuses", func(p *Proxy) { p.Stop() }, func(t *testing.T, c *redis.Client, key string) {
			require.Error(t, c.Ping(ctx).Err())
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewProxy(t, s.Addr())
			c := clientVia(t, p)
			require.NoError(t, c.Ping(ctx).Err(), "warm connection")
			tt.fault(p)
			tt.check(t, c, "k:"+tt.name)
			p.Heal()
			require.Eventually(t, func() bool { return c.Ping(ctx).Err() == nil }, 2*time.Second, 10*time.Millisecond, "heals")
		})
	}
}

func TestProxyResetClosesConnections(t *testing.T) {
	s := redistest.StartOne(t, "a", redistest.Options{})
	p := NewProxy(t, s.Addr())
	c := clientVia(t, p)
	ctx := context.Background()
	conn := c.Conn()
	defer conn.Close()
	require.NoError(t, conn.Ping(ctx).Err())
	p.Reset()
	assert.Error(t, conn.Ping(ctx).Err(), "the open connection is gone")
	assert.NoError(t, c.Ping(ctx).Err(), "new connections work")
}

func TestDriftClock(t *testing.T) {
	c := NewDriftClock(0.5)
	r0, c0 := time.Now(), c.Now()
	time.Sleep(40 * time.Millisecond)
	r1, c1 := time.Now(), c.Now()
	assert.InDelta(t, 0.5, float64(c1.Sub(c0))/float64(r1.Sub(r0)), 0.1)
	// Real maps a clock reading back to real time.
	assert.WithinDuration(t, r1.Add(100*time.Millisecond), c.Real(c1.Add(50*time.Millisecond)), 2*time.Millisecond)
	c.SetRate(2)
	c2 := c.Now()
	assert.False(t, c2.Before(c1), "continuous")
}

func TestProcessAndServerClockFaults(t *testing.T) {
	ctx := context.Background()
	s := redistest.StartOne(t, "a", redistest.Options{})
	admin := s.Client()
	require.NoError(t, admin.Set(ctx, "lock:x", "v", 10*time.Second).Err())
	require.NoError(t, admin.Set(ctx, "lock:y", "v", 100*time.Millisecond).Err())
	require.NoError(t, admin.Set(ctx, "other", "v", 0).Err())

	n, err := ShiftClock(ctx, s, "lock:*", -5*time.Second)
	require.NoError(t, err)
	assert.Equal(t, int64(2), n)
	pttl := admin.PTTL(ctx, "lock:x").Val()
	assert.Less(t, pttl, 5*time.Second+time.Millisecond)
	assert.Greater(t, pttl, 4*time.Second)
	assert.Zero(t, admin.Exists(ctx, "lock:y").Val(), "a TTL shifted below zero expired")
	assert.Equal(t, time.Duration(-1), admin.PTTL(ctx, "other").Val(), "keys without TTL untouched")

	require.NoError(t, DebugSleep(ctx, s, 300*time.Millisecond))
	t0 := time.Now()
	require.NoError(t, admin.Ping(ctx).Err())
	assert.Greater(t, time.Since(t0), 100*time.Millisecond, "the server slept")

	require.NoError(t, ClientPause(ctx, s, 200*time.Millisecond, "WRITE"))
	t0 = time.Now()
	require.NoError(t, admin.Set(ctx, "w", "v", 0).Err())
	assert.Greater(t, time.Since(t0), 100*time.Millisecond, "writes waited")

	KillRestart(s, 0, false)
	assert.Zero(t, admin.Exists(ctx, "lock:x").Val(), "restart without data forgets keys")
}

func TestProxySetUpstreamMovesNewConnections(t *testing.T) {
	ctx := context.Background()
	a := redistest.StartOne(t, "a", redistest.Options{})
	b := redistest.StartOne(t, "b", redistest.Options{})
	require.NoError(t, a.Client().Set(ctx, "where", "a", 0).Err())
	require.NoError(t, b.Client().Set(ctx, "where", "b", 0).Err())
	p := NewProxy(t, a.Addr())
	c := clientVia(t, p)
	conn := c.Conn()
	defer conn.Close()
	require.Equal(t, "a", conn.Get(ctx, "where").Val())

	p.SetUpstream(b.Addr())
	assert.Equal(t, b.Addr(), p.Upstream())
	assert.Equal(t, "a", conn.Get(ctx, "where").Val(), "an open connection stays on the old upstream")
	fresh := clientVia(t, p)
	assert.Equal(t, "b", fresh.Get(ctx, "where").Val(), "a new connection reaches the new upstream")
	p.Reset()
	assert.Equal(t, "b", c.Get(ctx, "where").Val(), "after Reset the pool reconnects to the new upstream")
}
