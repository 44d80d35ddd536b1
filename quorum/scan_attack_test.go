package quorum

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAttackScannerRecoveredMasterStallsOthers: a master that was down while the
// others made many passes comes back; the others must not wait for it to redo all
// those passes alone. A lock released on the masters that stayed up must leave the
// listing within a couple of passes, not after the recovered master has caught up
// pass by pass (at 100,000 locks, hours of a frozen listing showing a released
// lock as held).
func TestAttackScannerRecoveredMasterStallsOthers(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3)
	for _, s := range c.Servers[1:] {
		require.NoError(t, s.Client().Set(ctx, "lock:stuck", "v", time.Hour).Err())
	}
	clock := time.Now()
	s := m.newScanner("")
	s.now = func() time.Time { return clock }
	scanAll(t, s)

	c.Servers[0].Kill()
	for range 30 { // the others go on, pass after pass; the dead master is retried at each step
		clock = clock.Add(2 * scanRetry)
		require.NoError(t, s.Step(ctx))
	}
	require.GreaterOrEqual(t, s.nodes[1].passes, 20, "the masters that answer go on")

	c.Servers[0].Restart(false)
	require.Eventually(t, func() bool { return m.nodes[0].client.Ping(ctx).Err() == nil }, 5*time.Second, 100*time.Millisecond, "the client redials the restarted master")
	clock = clock.Add(2 * scanRetry)
	require.NoError(t, s.Step(ctx)) // the master answers again
	require.NoError(t, s.nodes[0].err)

	for _, srv := range c.Servers[1:] {
		require.NoError(t, srv.Client().Del(ctx, "lock:stuck").Err())
	}
	for range 6 { // one batch is a whole pass here
		clock = clock.Add(2 * scanRetry)
		require.NoError(t, s.Step(ctx))
	}
	lst, err := s.Listing()
	require.NoError(t, err)
	require.Nil(t, lst.Lock("stuck"), "released on every master 6 passes ago, still listed (passes %d %d %d): %v",
		s.nodes[0].passes, s.nodes[1].passes, s.nodes[2].passes, summary(lst))
}
