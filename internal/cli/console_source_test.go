package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/internal/events"
	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/topology"
	"github.com/redlock/redlock/tui"
)

// consoleCluster starts n real masters and returns their topology.
func consoleCluster(t *testing.T, n int) (*redistest.Cluster, *topology.Cluster) {
	t.Helper()
	rc := redistest.Start(t, n, redistest.Options{})
	c := topology.NewCluster("console-test")
	c.RestartQuarantine = false
	// What these tests check is what the console shows, not the masters' speed:
	// a node timeout that a loaded machine (the race detector, other tests
	// beside them) meets, so that a slow read is not taken for a dead master.
	// A paused master still times out, a second later.
	c.NodeTimeout = time.Second
	for _, s := range rc.Servers {
		c.Masters = append(c.Masters, topology.Master{Name: s.Name, Address: s.Addr()})
	}
	return rc, c
}

// pollUntil polls src until ok or the deadline, and returns the last snapshot.
func pollUntil(t *testing.T, src tui.Source, visible []string, ok func(tui.Snapshot) bool) tui.Snapshot {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	polls, late := 0, 0 // late: polls whose answer came after their deadline (a console drops it)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		snap := src.Poll(ctx, visible)
		polls++
		if ctx.Err() != nil {
			late++
		}
		cancel()
		if ok(snap) {
			return snap
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met after %d polls (%d late); last snapshot: %d locks, scan %+v, err %v",
				polls, late, len(snap.Locks), snap.Scan, snap.Err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func lockNames(snap tui.Snapshot) []string {
	locks := snap.Merged()
	out := make([]string, 0, len(locks))
	for _, li := range locks {
		out = append(out, li.Name)
	}
	return out
}

// TestConsoleListingIsIncrementalAndRowsOnScreenAreFresh: thousands of locks are
// listed pass by pass in the background (the progress shows until a pass is
// complete); the rows on screen are read afresh at every poll, so a lock released
// a moment ago is gone from them at once, while the rest of the listing catches up
// at the next pass. The history comes from listing differences.
func TestConsoleListingIsIncrementalAndRowsOnScreenAreFresh(t *testing.T) {
	rc, c := consoleCluster(t, 3)
	ctx := context.Background()
	for _, s := range rc.Servers {
		pipe := s.Client().Pipeline()
		for i := range 3000 {
			pipe.Set(ctx, fmt.Sprintf("lock:bulk/%04d", i), "v", time.Minute)
		}
		_, err := pipe.Exec(ctx)
		require.NoError(t, err)
	}
	src, mgr, cleanup, err := newClusterSource(c, sourceSettings{interval: 200 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(cleanup)
	assert.Equal(t, tui.EventsListing, src.eventSource, "notifications are off")

	snap := pollUntil(t, src, nil, func(s tui.Snapshot) bool { return s.Scan != nil && s.Scan.Complete })
	require.NoError(t, snap.Err)
	assert.Len(t, snap.Locks, 3000)
	assert.Equal(t, 3, snap.Answered)
	assert.True(t, slices.IsSortedFunc(snap.Locks, func(a, b admin.LockInfo) int { return strings.Compare(a.Name, b.Name) }))

	lk, err := mgr.TryAcquire(ctx, "bulk/0000x", 30*time.Second)
	require.NoError(t, err)
	for _, s := range rc.Servers {
		require.NoError(t, s.Client().Del(ctx, "lock:bulk/0001").Err())
	}
	snap = src.Poll(ctx, []string{"bulk/0000", "bulk/0000x", "bulk/0001"})
	names := lockNames(snap)
	assert.Contains(t, names, "bulk/0000x", "a lock on screen shows at once")
	assert.NotContains(t, names, "bulk/0001", "a lock on screen that is gone leaves at once")
	assert.Contains(t, names, "bulk/0000")
	snap = src.Poll(ctx, []string{"bulk/2999"}) // scrolled away
	assert.NotContains(t, lockNames(snap), "bulk/0001", "a lock seen gone stays gone when it leaves the screen")

	// The next complete pass reports the differences as events.
	var seen []tui.Event
	pollUntil(t, src, nil, func(s tui.Snapshot) bool {
		seen = append(seen, s.Events...)
		return slices.ContainsFunc(seen, func(e tui.Event) bool { return e.Name == "bulk/0000x" && e.Kind == events.Acquired })
	})
	assert.True(t, slices.ContainsFunc(seen, func(e tui.Event) bool { return e.Name == "bulk/0001" && e.Kind == events.Released }), "%v", seen)
	require.NoError(t, lk.Release(ctx))
}

// TestConsoleHistoryFromKeyspaceNotifications: with notifications on, a lock
// taken and released between two polls is in the history.
func TestConsoleHistoryFromKeyspaceNotifications(t *testing.T) {
	rc, c := consoleCluster(t, 3)
	ctx := context.Background()
	for _, s := range rc.Servers {
		require.NoError(t, s.Client().ConfigSet(ctx, "notify-keyspace-events", "Kg$x").Err())
	}
	src, mgr, cleanup, err := newClusterSource(c, sourceSettings{interval: 200 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(cleanup)
	require.Equal(t, tui.EventsKeyspace, src.eventSource)
	src.Poll(ctx, nil)
	// The keyspace subscriptions are in place on every master (a notification
	// published before them is lost by design; how long they take is the machine's).
	require.Eventually(t, func() bool {
		for _, s := range rc.Servers {
			if n, err := s.Client().PubSubNumPat(ctx).Result(); err != nil || n == 0 {
				return false
			}
		}
		return true
	}, 10*time.Second, 10*time.Millisecond, "the console's keyspace subscriptions")

	// A blink: taken and released between two polls. Notifications are
	// fire-and-forget (one published while a master's subscription is being set
	// up is lost, by design): the blink is repeated each second until one is seen
	// whole, so what is checked is that a blink reaches the history at all.
	// A blink that fails (a master slower than the node timeout on a loaded
	// machine) is not what is checked: it is logged and the next one tried.
	blinks := 0
	blink := func() {
		lk, err := mgr.TryAcquire(ctx, "blink", 10*time.Second)
		if err != nil {
			t.Logf("blink %d not taken: %v", blinks, err)
			return
		}
		if err := lk.Release(ctx); err != nil {
			t.Logf("blink %d not released: %v", blinks, err)
		}
		blinks++
	}
	blink()
	last := time.Now()
	var seen []string
	defer func() {
		if t.Failed() {
			t.Logf("%d blinks taken and released; events seen: %q", blinks, seen)
		}
	}()
	pollUntil(t, src, nil, func(s tui.Snapshot) bool {
		for _, e := range s.Events {
			seen = append(seen, e.Kind+" "+e.Name)
		}
		if slices.Contains(seen, "released blink") {
			return true
		}
		if time.Since(last) > time.Second {
			blink()
			last = time.Now()
		}
		return false
	})
	assert.Contains(t, seen, "acquired blink", "%v", seen)
}

// TestConsoleListingWithMastersDown: a dead master does not stall the listing, and
// with fewer than a quorum the poll says the listing is incomplete.
func TestConsoleListingWithMastersDown(t *testing.T) {
	rc, c := consoleCluster(t, 3)
	// A paused master's reads end at the node timeout: one that a poll (3 s)
	// outlasts several times over, and a healthy master on a loaded machine meets.
	c.NodeTimeout = 300 * time.Millisecond
	ctx := context.Background()
	src, mgr, cleanup, err := newClusterSource(c, sourceSettings{interval: 100 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(cleanup)
	lk, err := mgr.TryAcquire(ctx, "job", 30*time.Second)
	require.NoError(t, err)
	defer func() { _ = lk.Release(ctx) }()

	rc.Servers[2].Stop() // paused: every read of it times out
	t.Cleanup(rc.Servers[2].Cont)
	snap := pollUntil(t, src, []string{"job"}, func(s tui.Snapshot) bool { return s.Answered == 2 })
	require.NoError(t, snap.Err)
	require.Equal(t, []string{"job"}, lockNames(snap))
	assert.Equal(t, admin.StateHeld, snap.Merged()[0].State)

	rc.Servers[1].Kill()
	snap = pollUntil(t, src, []string{"job"}, func(s tui.Snapshot) bool { return s.Answered < 2 })
	require.Error(t, snap.Err)
	assert.Contains(t, snap.Err.Error(), "masters answered")
	assert.Equal(t, 3, snap.Total)
}
