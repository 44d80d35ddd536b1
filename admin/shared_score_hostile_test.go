package admin_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A shared holder's expiry is its member's score, which any writer can set: a
// score beyond what an int64 of milliseconds holds (1e300, 9.3e18) overflowed,
// and a holder on every master, whose key lives 10 s more, was listed with no
// validity and as held by nobody. No member outlives its key: the validity is
// at most the key's TTL.
func TestBugSharedHolderScoreBeyondTheKeysTTL(t *testing.T) {
	ctx := context.Background()
	c, _, a := testCluster(t, 3)
	const value = "rl1.AAAAAAAAAAAAAAAAAAAAAAAAAAA.eyJrIjoic2hhcmVkIn0"
	tests := []struct {
		name  string
		score float64
	}{
		{"1e300", 1e300},
		{"past int64 milliseconds", 9.3e18},
		{"within int64, past a duration", 9e15},
		{"an hour past the key's TTL", float64(time.Now().Add(time.Hour).UnixMilli())},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, s := range c.Servers {
				require.NoError(t, s.Client().ZAdd(ctx, "lock:shz", redis.Z{Score: tt.score, Member: value}).Err())
				require.NoError(t, s.Client().PExpire(ctx, "lock:shz", 10*time.Second).Err())
			}
			t.Cleanup(func() {
				for _, s := range c.Servers {
					s.Client().Del(ctx, "lock:shz")
				}
			})
			lst, err := a.Inspect(ctx, "")
			require.NoError(t, err)
			prims, err := a.Primitives(ctx, lst)
			require.NoError(t, err)
			require.Len(t, prims, 1)
			p := prims[0]
			assert.Equal(t, 1, p.Held, "the holder is on every master")
			require.Len(t, p.Holders, 1)
			h := p.Holders[0]
			assert.Equal(t, 3, h.Votes)
			assert.Greater(t, h.Validity, time.Duration(0))
			assert.LessOrEqual(t, h.Validity, 10*time.Second, "no longer than the key lives")
		})
	}
}
