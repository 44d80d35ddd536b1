package local

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckLoopback(t *testing.T) {
	tests := []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:6379", true},
		{"127.0.0.2:1", true},
		{"localhost:7000", true},
		{"[::1]:6379", true},
		{"10.0.0.1:6379", false},
		{"0.0.0.0:6379", false},
		{"redis.internal:6379", false},
		{"127.0.0.1", false},
	}
	for _, tc := range tests {
		t.Run(tc.addr, func(t *testing.T) {
			err := CheckLoopback(tc.addr)
			if tc.ok {
				assert.NoError(t, err)
			} else {
				assert.Error(t, err)
			}
		})
	}
	assert.ErrorIs(t, CheckLoopback("10.0.0.1:6379"), ErrNotLoopback)
}

func TestStartRefusesNonLoopbackNamingTheMaster(t *testing.T) {
	_, err := Start(context.Background(), []Spec{{"a", "127.0.0.1:0"}, {"b", "10.0.0.12:6379"}}, Options{Embedded: true})
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrNotLoopback))
	assert.Contains(t, err.Error(), "master b")
}

func TestStartServesAndExpires(t *testing.T) {
	for _, embedded := range []bool{true, false} {
		name := map[bool]string{true: "embedded", false: "redis-server"}[embedded]
		t.Run(name, func(t *testing.T) {
			if !embedded {
				_, err := FindRedisServer()
				require.NoError(t, err, "redis-server must be installed for this test")
			}
			set, err := Start(context.Background(), []Spec{{"a", "127.0.0.1:0"}, {"b", "127.0.0.1:0"}, {"c", "127.0.0.1:0"}}, Options{Embedded: embedded})
			require.NoError(t, err)
			defer set.Close()
			require.Len(t, set.Masters, 3)
			assert.Equal(t, embedded, set.Embedded)
			seen := map[string]bool{}
			for _, m := range set.Masters {
				assert.NotContains(t, m.Addr, ":0", "a real port was chosen")
				assert.False(t, seen[m.Addr])
				seen[m.Addr] = true
				c := redis.NewClient(&redis.Options{Addr: m.Addr, Protocol: 2, DisableIdentity: true})
				ctx := context.Background()
				require.NoError(t, c.Set(ctx, "k", "v", 150*time.Millisecond).Err())
				assert.Equal(t, "v", c.Get(ctx, "k").Val())
				require.Eventually(t, func() bool { return c.Exists(ctx, "k").Val() == 0 }, 3*time.Second, 20*time.Millisecond,
					"keys expire in real time")
				_ = c.Close()
			}
			addrs := set.Addrs()
			set.Close()
			set.Close() // idempotent
			c := redis.NewClient(&redis.Options{Addr: addrs[0], Protocol: 2, DisableIdentity: true, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
			defer c.Close()
			assert.Error(t, c.Ping(context.Background()).Err(), "stopped")
		})
	}
}
