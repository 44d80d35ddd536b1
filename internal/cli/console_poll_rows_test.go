package cli

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/admin"
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
	for _, li := range snap.Merged() {
		assert.NotEqual(t, admin.StateHeld, li.State, "%s shown as held with two of three masters dead: %+v", li.Name, li.Masters)
		for _, mv := range li.Masters[1:] {
			assert.False(t, mv.Present, "%s shown present on dead master %s", li.Name, mv.Master)
		}
	}
}

// TestHostileKeysInConsoleListing: keys of every type, without TTL, with control
// characters, invalid UTF-8, glob characters, reserved suffixes and a very long
// name, listed by the background loop and read afresh on screen.
func TestHostileKeysInConsoleListing(t *testing.T) {
	rc, c := consoleCluster(t, 3)
	ctx := context.Background()
	long := "long/" + strings.Repeat("x", 70000)
	hostile := []string{"esc\x1b[2J\x1b]0;pwn\a", "nl\nforged row", "bad\xff\xfeutf8", "glob*?[a-z]\\x", "name:fence", "name:queue", "name", long, "noTTL", "hash", "list", "zset", "bidi\u202eevil"}
	for _, s := range rc.Servers {
		cl := s.Client()
		for _, n := range hostile {
			switch n {
			case "hash":
				require.NoError(t, cl.HSet(ctx, "lock:"+n, "f", "1").Err())
			case "list":
				require.NoError(t, cl.RPush(ctx, "lock:"+n, "a").Err())
			case "zset":
				require.NoError(t, cl.ZAdd(ctx, "lock:"+n, redis.Z{Score: 1, Member: "a"}).Err())
			case "noTTL":
				require.NoError(t, cl.Set(ctx, "lock:"+n, "v", 0).Err())
			case "name:queue":
				require.NoError(t, cl.ZAdd(ctx, "lock:"+n, redis.Z{Score: 1, Member: "a"}).Err())
			default:
				require.NoError(t, cl.Set(ctx, "lock:"+n, "v", time.Minute).Err())
			}
		}
	}
	before := runtime.NumGoroutine()
	src, _, cleanup, err := newClusterSource(c, sourceSettings{interval: 50 * time.Millisecond})
	require.NoError(t, err)
	snap := pollUntil(t, src, hostile, func(s tui.Snapshot) bool { return s.Scan != nil && s.Scan.Complete })
	require.NoError(t, snap.Err)
	got := lockNames(snap)
	want := slices.DeleteFunc(slices.Clone(hostile), func(n string) bool { return strings.HasSuffix(n, ":fence") || strings.HasSuffix(n, ":queue") })
	slices.Sort(want)
	assert.Equal(t, want, got)
	for _, li := range snap.Merged() {
		t.Logf("%.40q %s %d/%d", li.Name, li.State, li.Votes, li.Total)
	}
	// The glob name is read exactly: Describe of "glob*?[a-z]\\x" does not list "name".
	for range 5 {
		snap = src.Poll(ctx, []string{"glob*?[a-z]\\x", "nomatch*"})
	}
	assert.Equal(t, want, lockNames(snap))
	cleanup()
	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<20)
		t.Fatalf("goroutines after cleanup: %d, before: %d\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}

// TestAttackReleasedRowShiftsOntoScreen: the screen shows the first 10 rows; a lock
// on screen and the lock just below the screen are both released. At the next
// poll the row on screen is gone (read afresh), so the row below moves up onto
// the screen: it was not read afresh, and the released lock shows on screen.
func TestAttackReleasedRowShiftsOntoScreen(t *testing.T) {
	rc, c := consoleCluster(t, 3)
	ctx := context.Background()
	var names []string
	for i := range 30 {
		names = append(names, fmt.Sprintf("row/%02d", i))
	}
	for _, s := range rc.Servers {
		for _, n := range names {
			require.NoError(t, s.Client().Set(ctx, "lock:"+n, "v", time.Minute).Err())
		}
	}
	src, _, cleanup, err := newClusterSource(c, sourceSettings{interval: 10 * time.Second})
	require.NoError(t, err)
	t.Cleanup(cleanup)
	pollUntil(t, src, names[:10], func(s tui.Snapshot) bool { return s.Scan != nil && s.Scan.Complete })
	for _, s := range rc.Servers {
		require.NoError(t, s.Client().Del(ctx, "lock:row/03", "lock:row/10").Err())
	}
	// The console asks for the rows on screen and a page on either side
	// (the tui table's onScreen): 10 rows shown, rows 0-19 read.
	snap := src.Poll(ctx, names[:20])
	screen := lockNames(snap)[:10]
	assert.NotContains(t, screen, "row/03")
	assert.NotContains(t, screen, "row/10", "a released lock moved onto the screen without being read: %v", screen)
}
