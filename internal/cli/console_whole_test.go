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

// The console's filter changes which rows are on screen, never the counts they
// show: with only one permit slot of a semaphore on screen (the filter matched
// its holder's label) the KIND column read "sem 1/3" for 2 permits held, and
// with one name of a 2-name hold "multi 1".
func TestBugConsoleFilterChangesTheCounts(t *testing.T) {
	ctx := context.Background()
	_, c := consoleCluster(t, 3)
	src, mgr, cleanup, err := newClusterSource(c, sourceSettings{interval: 100 * time.Millisecond})
	require.NoError(t, err)
	defer cleanup()
	ttl := 10 * time.Second
	sem, err := mgr.Semaphore("sem", 3)
	require.NoError(t, err)
	for _, owner := range []string{"job-a", "job-b"} {
		_, err = sem.TryAcquire(ctx, ttl, quorum.WithLockOwner(owner))
		require.NoError(t, err)
	}
	inout, err := mgr.Multi("in/out", "in/put")
	require.NoError(t, err)
	_, err = inout.Acquire(ctx, ttl)
	require.NoError(t, err)

	tests := []struct {
		visible string
		kind    string
	}{
		{"sem:permit:0", "sem 2/3"},
		{"sem:permit:1", "sem 2/3"},
		{"in/out", "multi 2"},
	}
	for _, tt := range tests {
		t.Run(tt.visible, func(t *testing.T) {
			snap := pollUntil(t, src, []string{tt.visible}, func(s tui.Snapshot) bool {
				return s.Kinds[tt.visible] == tt.kind
			})
			assert.Equal(t, tt.kind, snap.Kinds[tt.visible])
			for _, li := range snap.Fresh {
				assert.Equal(t, tt.visible, li.Name, "only the rows on screen come back")
			}
		})
	}
}

// Every holder of a shared row is findable by the console's filter, which
// matches the owner column: the row showed the first holder only, so filtering
// by another holder's label hid the row.
func TestBugConsoleSharedRowNamesEveryHolder(t *testing.T) {
	ctx := context.Background()
	_, c := consoleCluster(t, 3)
	src, mgr, cleanup, err := newClusterSource(c, sourceSettings{interval: 100 * time.Millisecond})
	require.NoError(t, err)
	defer cleanup()
	owners := []string{"reader-a", "reader-b", "reader-c"}
	doc, err := mgr.Shared("doc")
	require.NoError(t, err)
	for _, owner := range owners {
		_, err = doc.TryAcquire(ctx, 10*time.Second, quorum.WithLockOwner(owner))
		require.NoError(t, err)
	}
	snap := pollUntil(t, src, []string{"doc"}, func(s tui.Snapshot) bool { return s.Kinds["doc"] == "shared 3" })
	require.Len(t, snap.Fresh, 1)
	require.NotNil(t, snap.Fresh[0].Owner)
	for _, owner := range owners {
		assert.Contains(t, snap.Fresh[0].Owner.Label, owner)
	}
}
