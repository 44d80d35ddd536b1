package quorum

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestBugLossWatchFullTrackingTableDoesNotLoop: a master whose
// tracking-table-max-keys is below the keys watched there evicts a tracked key
// (with an invalidation) for each key read; the watch read every invalidated
// key again at once, which evicted another, for as long as the locks were held
// (about 66,000 GET a second on each master with 50 locks and a limit of 10).
// A key invalidated more than trackChurn times within a trackPoll is now read
// again at the next tick instead: the reads per master and second stay under
// (trackChurn + 1) per key, and a loss is still heard, within trackPoll and a
// few round trips, while every other lock stays held.
func TestBugLossWatchFullTrackingTableDoesNotLoop(t *testing.T) {
	const locks, limit = 50, 10
	c, m := testCluster(t, 5)
	ctx := context.Background()
	for _, s := range c.Servers {
		require.NoError(t, s.Client().ConfigSet(ctx, "tracking-table-max-keys", fmt.Sprint(limit)).Err())
	}
	var ls []*Lock
	for i := range locks {
		l, err := m.Acquire(ctx, fmt.Sprintf("full/%d", i), 30*time.Second, WithLossWatch())
		require.NoError(t, err)
		ls = append(ls, l)
	}
	time.Sleep(trackPoll + 200*time.Millisecond) // every key read at least once, the churn at its worst
	gets := func() []float64 {
		var out []float64
		for _, s := range c.Servers {
			out = append(out, commandStats(t, s.Client())["get"][0])
		}
		return out
	}
	const span = 3 * trackPoll
	before := gets()
	time.Sleep(span)
	after := gets()
	// Per key and second: trackChurn reads on invalidations, one at the tick,
	// and one more for a window cut in two by the measurement; doubled for
	// the scheduling of a loaded machine.
	bound := 2 * float64(locks*(trackChurn+2)) * span.Seconds()
	for i, s := range c.Servers {
		n := after[i] - before[i]
		t.Logf("%s: %.0f GET in %v (%.0f/s)", s.Name, n, span, n/span.Seconds())
		require.Less(t, n, bound, "%s: the watch keeps reading the keys its full tracking table evicts", s.Name)
	}

	lost := ls[locks/2]
	at := time.Now()
	for _, s := range c.Servers[:3] {
		require.NoError(t, s.Client().Del(ctx, lost.Key()).Err())
	}
	select {
	case <-lost.Done():
		t.Logf("Done %v after the DEL", time.Since(at))
		require.ErrorIs(t, lost.Err(), ErrLost)
	case <-time.After(trackPoll + 3*time.Second):
		t.Fatalf("the loss was not heard within %v", trackPoll+3*time.Second)
	}
	for _, l := range ls {
		if l != lost {
			require.NoError(t, l.Err(), "%s is still held on every master", l.Name())
		}
	}
}
