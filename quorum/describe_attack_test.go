package quorum

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAttackDescribeQueueNameRace: the rows on screen may include a name ending in
// ":queue" (any key under the prefix is listed by name by other tools' keys).
// Describe reads the same key list on every master in parallel; dropping the
// queue keys from it must not rewrite the list the other masters are reading
// (a data race under -race, and masters reading a shifted list).
func TestAttackDescribeQueueNameRace(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3)
	for _, s := range c.Servers {
		require.NoError(t, s.Client().Set(ctx, "lock:b", "v", time.Minute).Err())
	}
	for range 50 {
		lst, err := m.describe(ctx, []string{"a:queue", "b", "c:queue", "d"})
		require.NoError(t, err)
		li := lst.Lock("b")
		require.NotNil(t, li)
		require.Equal(t, 3, li.Votes)
	}
}
