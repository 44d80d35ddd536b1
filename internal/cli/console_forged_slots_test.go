package cli

import (
	"context"
	"encoding/base64"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/tui"
)

// TestBugConsoleSemaphoreForgedSlots: permit keys of slots a semaphore never
// uses (NAME:permit:7 on a semaphore of 2, holding a copy of a real permit's
// value; a value declaring a limit of 5 in slot 3) made the console's KIND
// column say "sem 4/5" on every row of the semaphore. Its rows say 2/2, and the
// forged keys are rows of their own, not of the semaphore.
func TestBugConsoleSemaphoreForgedSlots(t *testing.T) {
	ctx := context.Background()
	rc, c := consoleCluster(t, 3)
	src, mgr, cleanup, err := newClusterSource(c, sourceSettings{interval: 100 * time.Millisecond})
	require.NoError(t, err)
	defer cleanup()
	sem, err := mgr.Semaphore("fsem", 2)
	require.NoError(t, err)
	for range 2 {
		p, err := sem.TryAcquire(ctx, 10*time.Second)
		require.NoError(t, err)
		defer func() { _ = p.Release(ctx) }()
	}
	real, err := rc.Servers[0].Client().Get(ctx, mgr.Key("fsem:permit:0")).Result()
	require.NoError(t, err)
	owner := base64.RawURLEncoding.EncodeToString([]byte(`{"o":"forger","k":"sem","n":5}`))
	for _, s := range rc.Servers {
		require.NoError(t, s.Client().Set(ctx, mgr.Key("fsem:permit:7"), real, time.Minute).Err())
		require.NoError(t, s.Client().Set(ctx, mgr.Key("fsem:permit:3"), "rl1.AAAAAAAAAAAAAAAAAAAAAAAAAAA."+owner, time.Minute).Err())
	}

	visible := []string{"fsem:permit:0", "fsem:permit:1", "fsem:permit:3", "fsem:permit:7"}
	snap := pollUntil(t, src, visible, func(s tui.Snapshot) bool { return len(s.Merged()) >= 4 })
	for _, name := range visible[:2] {
		assert.Equal(t, "sem 2/2", snap.Kinds[name], "%s: %v", name, snap.Kinds)
	}
	for _, name := range visible[2:] {
		assert.Equal(t, "stray", snap.Kinds[name], "%s is no slot of the semaphore: %v", name, snap.Kinds)
	}
	for _, li := range snap.Merged() {
		if li.Owner != nil {
			assert.NotContains(t, li.Owner.Label, "/5 held", li.Name)
			assert.NotContains(t, li.Owner.Label, "3/2", li.Name)
		}
		assert.NotEqual(t, admin.LockState(""), li.State, li.Name)
	}
}
