package quorum

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The short form publishes nothing where nobody waits, and a failed round's
// clean-up (the quiet form) never publishes: counted with a subscriber on every
// master's wake-up channels.
func TestAttackShortReleasePublishesOnlyWhereSomebodyWaits(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3)
	var mu sync.Mutex
	heard := map[string]int{}
	for _, s := range c.Servers {
		ps := s.Client().PSubscribe(ctx, "lock:pub*")
		_, err := ps.Receive(ctx)
		require.NoError(t, err)
		t.Cleanup(func() { _ = ps.Close() })
		go func() {
			for msg := range ps.Channel() {
				mu.Lock()
				heard[msg.Channel]++
				mu.Unlock()
			}
		}()
	}
	count := func() int {
		time.Sleep(100 * time.Millisecond)
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, v := range heard {
			n += v
		}
		clear(heard)
		return n
	}
	// Nobody waits: nothing published, 20 times.
	for range 20 {
		l, err := m.Acquire(ctx, "pub", time.Minute)
		require.NoError(t, err)
		require.NoError(t, l.Release(ctx))
	}
	assert.Zero(t, count(), "a release with nobody waiting publishes nothing")
	// A failed round: another holds a quorum; the round's clean-up on the master it
	// took is quiet.
	for _, s := range c.Servers[:2] {
		require.NoError(t, s.Client().Set(ctx, "lock:pub", "someone-else", time.Minute).Err())
	}
	_, err := m.TryAcquire(ctx, "pub", time.Minute)
	require.ErrorIs(t, err, ErrNotAcquired)
	assert.Zero(t, count(), "a failed round's clean-up publishes nothing")
	for _, s := range c.Servers[:2] {
		require.NoError(t, s.Client().Del(ctx, "lock:pub").Err())
	}
	// With a waiter's marker: the release publishes (where the marker is).
	l, err := m.Acquire(ctx, "pub", time.Minute)
	require.NoError(t, err)
	w := managerFor(t, c, waiterOpts()...)
	d := wakeAfter(t, 300*time.Millisecond, func(ctx context.Context) (*Lock, error) { return w.Acquire(ctx, "pub", time.Minute) },
		func() { require.NoError(t, l.Release(ctx)) })
	assert.Less(t, d, wakeBound)
	assert.Positive(t, count(), "the release with a waiter published")
	checkLeftKeys(t, c, "lock:pub")
}

// Regression: a key of another type at NAME:queue (written by another client: no
// lock name can end with :queue) on every master. The release succeeded and left it
// as it was, but published nothing (a key of another type "is no queue"), and the
// plain waiters, who cannot mark a key of another type, slept their whole retry
// delay although the lock was released: they must be woken.
func TestBugHostileQueueKeyLosesThePlainWaitersWakeUp(t *testing.T) {
	writers := []struct {
		name  string
		write func(ctx context.Context, c *redis.Client, key string) error
	}{
		{"a string", func(ctx context.Context, c *redis.Client, key string) error {
			return c.Set(ctx, key, "\x1b[31mhostile", 0).Err()
		}},
		{"a hash", func(ctx context.Context, c *redis.Client, key string) error {
			return c.HSet(ctx, key, "h:x", "1").Err()
		}},
		{"a list", func(ctx context.Context, c *redis.Client, key string) error { return c.RPush(ctx, key, "h:x").Err() }},
		{"a set", func(ctx context.Context, c *redis.Client, key string) error { return c.SAdd(ctx, key, "h:x").Err() }},
		{"a stream", func(ctx context.Context, c *redis.Client, key string) error {
			return c.XAdd(ctx, &redis.XAddArgs{Stream: key, Values: []string{"h:x", "1"}}).Err()
		}},
	}
	ctx := context.Background()
	c, holder := testCluster(t, 3)
	waiter := managerFor(t, c, waiterOpts()...)
	for i, w := range writers {
		t.Run(w.name, func(t *testing.T) {
			name := fmt.Sprint("hostile", i)
			key := holder.Key(name)
			for _, s := range c.Servers {
				require.NoError(t, w.write(ctx, s.Client(), key+queueSuffix))
			}
			before := map[string]string{}
			for _, s := range c.Servers {
				before[s.Name] = s.Client().Type(ctx, key+queueSuffix).Val()
			}
			l, err := holder.Acquire(ctx, name, time.Minute)
			require.NoError(t, err)
			d := wakeAfter(t, 300*time.Millisecond, func(ctx context.Context) (*Lock, error) { return waiter.Acquire(ctx, name, time.Minute) },
				func() { require.NoError(t, l.Release(ctx)) })
			assert.Less(t, d, wakeBound, "the waiter slept its %v retry delay", waiterRetry)
			for _, s := range c.Servers {
				assert.Equal(t, before[s.Name], s.Client().Type(ctx, key+queueSuffix).Val(), "%s: the foreign key is left as it was", s.Name)
				assert.Zero(t, s.Client().Exists(ctx, key).Val(), "%s: the lock key is left", s.Name)
			}
		})
	}
}
