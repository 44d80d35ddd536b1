package quorum

// Lost wake-ups around the waiting flag: each waiter kind waits for a holder
// that keeps its short TTL alive past the waiter's first look, under a fault
// applied while the waiter sleeps its 5 s retry delay; the release must still
// wake it (a gap near 5 s is a lost wake-up).

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

func TestAttackFlagWakeUpsUnderFaults(t *testing.T) {
	const ttl = 600 * time.Millisecond
	kinds := []struct {
		who      string
		election bool
		acquire  func(ctx context.Context, m *Manager) (*Lock, error)
	}{
		{who: "plain", acquire: func(ctx context.Context, m *Manager) (*Lock, error) { return m.Acquire(ctx, "fw", time.Minute) }},
		{who: "fair", acquire: func(ctx context.Context, m *Manager) (*Lock, error) {
			return m.Acquire(ctx, "fw", time.Minute, WithFair())
		}},
		{who: "shared", acquire: func(ctx context.Context, m *Manager) (*Lock, error) {
			return m.Acquire(ctx, "fw", time.Minute, withShared())
		}},
		{who: "multi", acquire: func(ctx context.Context, m *Manager) (*Lock, error) {
			return m.takeMulti(ctx, []string{"fw", "fw2"}, time.Minute)
		}},
		{who: "candidate", election: true, acquire: func(ctx context.Context, m *Manager) (*Lock, error) {
			e, err := m.Election("fw")
			if err != nil {
				return nil, err
			}
			ld, err := e.Campaign(ctx, "two", time.Minute)
			if err != nil {
				return nil, err
			}
			return ld.Lock, nil
		}},
	}
	faultsTable := []struct {
		name string
		do   func(c *redistest.Cluster)
	}{
		{"none", func(*redistest.Cluster) {}},
		{"flushall one master", func(c *redistest.Cluster) { _ = c.Servers[0].Client().FlushAll(context.Background()).Err() }},
		{"script flush everywhere", func(c *redistest.Cluster) {
			for _, s := range c.Servers {
				_ = s.Client().ScriptFlush(context.Background()).Err()
			}
		}},
		{"flag deleted on one master", func(c *redistest.Cluster) {
			ctx := context.Background()
			for _, k := range c.Servers[1].Client().Keys(ctx, "*waiting").Val() {
				_ = c.Servers[1].Client().Del(ctx, k).Err()
			}
		}},
	}
	for _, f := range faultsTable {
		for _, k := range kinds {
			t.Run(f.name+"/"+k.who, func(t *testing.T) {
				t.Parallel() // each waits out a hold of 1.8 s, a processor idle
				ctx := context.Background()
				c, holder := testCluster(t, 3)
				var release func()
				if k.election {
					e, err := holder.Election("fw")
					require.NoError(t, err)
					ld, err := e.Campaign(ctx, "one", ttl)
					require.NoError(t, err)
					release = func() { require.NoError(t, ld.Release(ctx)) }
				} else {
					l, err := holder.Acquire(ctx, "fw", ttl, WithKeepAlive(KeepAlive{}))
					require.NoError(t, err)
					release = func() { _ = l.Release(ctx) }
				}
				m := managerFor(t, c, WithRetry(1000, 5*time.Second, 0), WithNodeTimeout(time.Second))
				d := wakeAfter(t, 3*ttl, func(ctx context.Context) (*Lock, error) { return k.acquire(ctx, m) },
					func() { f.do(c); time.Sleep(2 * ttl); release() })
				d -= 2 * ttl
				assert.Less(t, d, 2*time.Second, "%s waiter slept its retry delay after %s", k.who, f.name)
			})
		}
	}
}

// A hostile flag (a hash, a 16 MB string, either without a TTL) neither breaks a
// release nor a waiter's wake-up, and nothing is left without a TTL.
func TestAttackFlagHostileFlagKey(t *testing.T) {
	big := string(make([]byte, 16<<20))
	for _, tt := range []struct {
		name  string
		write func(ctx context.Context, s *redistest.Server, k string) error
	}{
		{"hash", func(ctx context.Context, s *redistest.Server, k string) error {
			return s.Client().HSet(ctx, k, "f", "v").Err()
		}},
		{"huge string", func(ctx context.Context, s *redistest.Server, k string) error {
			return s.Client().Set(ctx, k, big, 0).Err()
		}},
		{"zset", func(ctx context.Context, s *redistest.Server, k string) error {
			return s.Client().ZAdd(ctx, k, zmember(1, "x")).Err()
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			c, holder := testCluster(t, 3)
			for _, s := range c.Servers {
				require.NoError(t, tt.write(ctx, s, holder.Key("hf")+waitingSuffix))
			}
			// Nobody waits: the release still works.
			l, err := holder.Acquire(ctx, "hf", time.Minute)
			require.NoError(t, err)
			require.NoError(t, l.Release(ctx))
			lst, err := holder.inspect(ctx, "")
			require.NoError(t, err)
			assert.Empty(t, lst.Locks)
			for _, s := range c.Servers {
				require.NoError(t, tt.write(ctx, s, holder.Key("hf")+waitingSuffix))
			}
			l, err = holder.Acquire(ctx, "hf", time.Minute)
			require.NoError(t, err)
			for _, fair := range []bool{false, true} {
				m := managerFor(t, c, WithRetry(1000, 5*time.Second, 0), WithNodeTimeout(time.Second))
				d := wakeAfter(t, 300*time.Millisecond, func(ctx context.Context) (*Lock, error) {
					if fair {
						return m.Acquire(ctx, "hf", time.Minute, WithFair())
					}
					return m.Acquire(ctx, "hf", time.Minute)
				}, func() { require.NoError(t, l.Release(ctx)) })
				assert.Less(t, d, 2*time.Second, "fair=%v", fair)
				l, err = holder.Acquire(ctx, "hf", time.Minute)
				require.NoError(t, err)
			}
			require.NoError(t, l.Release(ctx))
			checkLeftKeys(t, c, holder.Key("hf"))
		})
	}
}
