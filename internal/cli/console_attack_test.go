package cli

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/quorum"
	"github.com/redlock/redlock/tui"
)

// TestAttackPollQuorumLostShowsStaleHeldRows: two of three masters die right after
// a complete pass. The next poll reads the row on screen afresh (Describe): only
// one master answers. The snapshot must then not show that row as held on masters
// that did not answer, and must say the listing is incomplete (Answered below the
// quorum), even though the background listing has not stepped again yet.
func TestAttackPollQuorumLostShowsStaleHeldRows(t *testing.T) {
	rc, c := consoleCluster(t, 3)
	ctx := context.Background()
	// A long interval: after a pass the loop waits before the next step.
	src, mgr, cleanup, err := newClusterSource(c, sourceSettings{interval: 10 * time.Second})
	require.NoError(t, err)
	t.Cleanup(cleanup)
	_, err = mgr.TryAcquire(ctx, "job", time.Minute)
	require.NoError(t, err)
	snap := pollUntil(t, src, []string{"job"}, func(s tui.Snapshot) bool { return s.Scan != nil && s.Scan.Complete })
	require.Equal(t, []string{"job"}, lockNames(snap))

	rc.Servers[1].Kill()
	rc.Servers[2].Kill()
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	snap = src.Poll(pctx, []string{"job"})
	require.Error(t, snap.Err, "the rows on screen could not be read from a quorum")
	assert.Less(t, snap.Answered, 2, "the banner says the listing is incomplete")
	for _, li := range snap.Locks {
		assert.NotEqual(t, quorum.StateHeld, li.State, "%s shown as held with two of three masters dead: %+v", li.Name, li.Masters)
		for _, mv := range li.Masters[1:] {
			assert.False(t, mv.Present, "%s shown present on dead master %s", li.Name, mv.Master)
		}
	}
}
