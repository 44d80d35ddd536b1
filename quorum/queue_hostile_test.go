package quorum

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBugHostileQueueKeyFailsPlainRelease: a key of another type at a lock's
// queue name (NAME:queue, which no lock name can take: written by another client)
// made release.lua raise WRONGTYPE after it had deleted the lock key, so every
// Release of the plain lock NAME said "quorum of masters unavailable" although
// the lock was released on every master. A plain lock never uses the queue: its
// release must succeed, and wake the name's waiters as usual.
func TestBugHostileQueueKeyFailsPlainRelease(t *testing.T) {
	tests := []struct {
		name  string
		write func(ctx context.Context, c *redis.Client, key string) error
	}{
		{"a string", func(ctx context.Context, c *redis.Client, key string) error {
			return c.Set(ctx, key, "hostile\r\n\x1b[31m", 0).Err()
		}},
		{"a huge string", func(ctx context.Context, c *redis.Client, key string) error {
			return c.Set(ctx, key, strings.Repeat("x", 8<<20), 0).Err()
		}},
		{"a hash", func(ctx context.Context, c *redis.Client, key string) error {
			return c.HSet(ctx, key, "q:x", "1").Err()
		}},
		{"a list", func(ctx context.Context, c *redis.Client, key string) error {
			return c.RPush(ctx, key, "h:x").Err()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			c, m := testCluster(t, 3)
			for _, s := range c.Servers {
				require.NoError(t, tt.write(ctx, s.Client(), "lock:hq:queue"))
			}
			l, err := m.Acquire(ctx, "hq", time.Minute)
			require.NoError(t, err)
			assert.NoError(t, l.Release(ctx), "the lock was released on every master")
			for _, s := range c.Servers {
				n, err := s.Client().Exists(ctx, "lock:hq").Result()
				require.NoError(t, err)
				assert.Zero(t, n, "%s still holds the lock key", s.Name)
				typ, err := s.Client().Type(ctx, "lock:hq:queue").Result()
				require.NoError(t, err)
				assert.NotEqual(t, "none", typ, "%s: the foreign key is left as it was", s.Name)
				assert.NotEqual(t, "zset", typ, "%s: the foreign key is left as it was", s.Name)
			}
			// Taken and released again: the hostile key changes nothing.
			l, err = m.Acquire(ctx, "hq", time.Minute)
			require.NoError(t, err)
			assert.NoError(t, l.Release(ctx))
		})
	}
}
