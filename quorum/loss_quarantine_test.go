package quorum

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// TestBugVerifyDoesNotCountAQuarantinedMaster: an acquisition or an extension
// does not count the vote of a master in its restart quarantine (it may have
// forgotten locks it granted, and granted them again), but Lock.Verify, which
// alone decides a loss for the loss watch, counted it: with the value on 3 of 5
// masters, one of them just restarted, Verify said the lock was held on a
// quorum while the next extension would find only 2 votes. Verify must now
// treat a quarantined master as acquire does: its copy is not a vote (the
// masters cannot tell, ErrUnavailable); once it loses the value too, it counts
// as missing, as any master, and the loss is decided (ErrLost).
func TestBugVerifyDoesNotCountAQuarantinedMaster(t *testing.T) {
	const window = 2 * time.Second
	c := redistest.Start(t, 5, redistest.Options{})
	// A master younger than the window is quarantined at first sight: age them.
	time.Sleep(window + 1100*time.Millisecond)
	m := managerFor(t, c, WithRestartQuarantine(window))
	ctx := context.Background()
	l, err := m.Acquire(ctx, "vq", 20*time.Second)
	require.NoError(t, err)
	require.Equal(t, 5, l.Votes().Votes)
	require.NoError(t, l.Verify(ctx))

	restarted := c.Servers[0]
	restarted.Restart(true)
	// Its data came back (a persisted value): it holds the lock's value again.
	require.NoError(t, restarted.Client().Set(ctx, l.Key(), l.Token(), 20*time.Second).Err())
	require.Eventually(t, func() bool {
		_ = l.Verify(ctx) // dials the restarted master again, which starts its quarantine
		_, in := m.quarantineEnds()[restarted.Name]
		return in
	}, window, 10*time.Millisecond, "the restarted master was never quarantined")

	for _, s := range c.Servers[3:] {
		require.NoError(t, s.Client().Del(ctx, l.Key()).Err())
	}
	// Held on 3 of 5, one of them quarantined: 2 votes, 2 missing, 1 cannot tell.
	err = l.Verify(ctx)
	require.ErrorIs(t, err, ErrUnavailable, "a quarantined master's copy counted as a vote")
	require.NotErrorIs(t, err, ErrLost)
	require.NoError(t, l.Err(), "an inconclusive verification is no loss")

	// The quarantined master loses it too: it counts as missing, as any master
	// (the value on 2 of 5, the next extension would find 2 votes).
	require.NoError(t, restarted.Client().Del(ctx, l.Key()).Err())
	require.ErrorIs(t, l.Verify(ctx), ErrLost, "3 of 5 masters missing, one of them quarantined, is a loss")
	require.ErrorIs(t, l.Err(), ErrLost)
}
