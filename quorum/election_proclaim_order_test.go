package quorum

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBugProclaimOrderedLowerArrivingLast: of two concurrent Proclaims of one
// leadership, the earlier one (lower number) reaching the masters after the later
// one is refused there and fails with ErrSuperseded; Value, Leader and the
// masters all keep the later value. Before, both succeeded and Value held the
// earlier value, which no master held, while Leader reported the later one.
func TestBugProclaimOrderedLowerArrivingLast(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3)
	e, err := m.Election("order")
	require.NoError(t, err)
	ld, err := e.Campaign(ctx, "v0", 10*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ld.Release(ctx) })

	// The earlier Proclaim takes its number, then is slow to send...
	ld.mu.Lock()
	ld.seq++
	early := ld.seq
	ld.mu.Unlock()
	// ...while a later one goes through, ...
	require.NoError(t, ld.Proclaim(ctx, "later"))
	// ...and the earlier one reaches the masters last.
	err = ld.proclaimSeq(ctx, "earlier", early)
	require.ErrorIs(t, err, ErrSuperseded)
	assert.NotErrorIs(t, err, ErrLost, "the leadership is intact")

	assert.Equal(t, "later", ld.Value())
	li, err := e.Leader(ctx)
	require.NoError(t, err)
	assert.Equal(t, "later", li.Value)
	_, _, record := e.keys()
	for i, s := range c.Servers {
		v, err := s.Client().HGet(ctx, record, "value").Result()
		require.NoError(t, err)
		assert.Equal(t, "later", v, "master %d", i)
	}
	require.NoError(t, ld.Lock.Verify(ctx), "still leading")

}
