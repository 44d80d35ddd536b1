package quorum

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestScannerFlushAndPauseMidPass: keys without TTL flushed mid-pass leave the
// listing within two passes; a paused master costs a step at most its deadlines.
func TestScannerFlushAndPauseMidPass(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3)
	for _, s := range c.Servers {
		pipe := s.Client().Pipeline()
		for j := range 2500 {
			pipe.Set(ctx, fmt.Sprintf("lock:k/%04d", j), "v", 0)
		}
		_, err := pipe.Exec(ctx)
		require.NoError(t, err)
	}
	s := m.newScanner("")
	scanAll(t, s)
	require.NoError(t, s.Step(ctx)) // mid-pass
	for _, srv := range c.Servers {
		require.NoError(t, srv.Client().FlushAll(ctx).Err())
	}
	for range 8 {
		require.NoError(t, s.Step(ctx))
	}
	lst, err := s.Listing()
	require.NoError(t, err)
	require.Empty(t, lst.Locks)

	c.Servers[2].Stop()
	t.Cleanup(c.Servers[2].Cont)
	for range 3 {
		t0 := time.Now()
		require.NoError(t, s.Step(ctx))
		require.Less(t, time.Since(t0), 3*m.inspectCallTimeout()+200*time.Millisecond)
	}
	lst, _ = s.Listing()
	require.False(t, lst.Masters[2].Answered)
}
