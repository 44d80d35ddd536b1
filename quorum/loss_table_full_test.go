package quorum

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// TestBugLossWatchFullTrackingTableDoesNotLoop: a master whose
// tracking-table-max-keys is below the keys watched there evicts a tracked key
// (with an invalidation) for each key read; the watch read every invalidated
// key again at once, which evicted another, for as long as the locks were held
// (about 66,000 GET a second on each master with 50 locks and a limit of 10).
// On a master whose reads found keys unchanged more than trackBusy times within
// a trackPoll, a key found unchanged trackChurn times is now read again only
// trackSlow after its invalidation, with the others put off: the reads per
// master and second stay under trackBusy plus one per key and trackSlow, and a
// loss is still heard, within trackSlow and a few round trips, while every
// other lock stays held.
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
	// Per second: the reads a busy master gets answered at once, and one read
	// of each key every trackSlow; doubled for a window cut in two by the
	// measurement and for the scheduling of a loaded machine.
	bound := 2 * float64(trackBusy(locks)+locks*int(trackPoll/trackSlow)) * span.Seconds()
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
	case <-time.After(trackSlow + 3*time.Second):
		t.Fatalf("the loss was not heard within %v", trackSlow+3*time.Second)
	}
	for _, l := range ls {
		if l != lost {
			require.NoError(t, l.Err(), "%s is still held on every master", l.Name())
		}
	}
}

// TestBugLossWatchHearsAHotKeyAtOnce: the cap on a key's invalidations
// answered at once (trackChurn) applied on any master, so a name that other
// clients write often (shared holders joining and leaving a shared name, or
// candidates trying the masters a leader does not hold) had its loss heard only
// at the next tick (up to trackPoll) once its key had been invalidated
// trackChurn times within the second. The cap applies now only on a master busy
// with reads that change nothing (trackBusy): a watched shared holder hears a
// DEL on 3 of 5 masters right after ten other holders' changes within a few
// round trips, trial after trial.
func TestBugLossWatchHearsAHotKeyAtOnce(t *testing.T) {
	c, m := testCluster(t, 5)
	ctx := context.Background()
	for trial := range 6 {
		l, err := m.Acquire(ctx, "hot", 30*time.Second, withShared(), WithLossWatch())
		require.NoError(t, err)
		armed(t, m, l)
		for i := range 2 * trackChurn {
			for _, s := range c.Servers {
				require.NoError(t, s.Client().ZAdd(ctx, l.Key(), redis.Z{Score: 1, Member: fmt.Sprintf("rl1.other%d.x", i)}).Err())
			}
		}
		at := time.Now()
		for _, s := range c.Servers[:3] {
			require.NoError(t, s.Client().Del(ctx, l.Key()).Err())
		}
		select {
		case <-l.Done():
			t.Logf("trial %d: Done %v after the DEL", trial, time.Since(at))
			require.ErrorIs(t, l.Err(), ErrLost)
		case <-time.After(400 * time.Millisecond): // the bound is about 205ms; put off, up to trackPoll
			t.Fatalf("trial %d: the DEL of a key changed often was not heard at once", trial)
		}
		for _, s := range c.Servers {
			require.NoError(t, s.Client().Del(ctx, l.Key()).Err())
		}
	}
}

// TestBugLossWatchChurnWhereNotHeldIsNotBusy: a tracker counted every
// invalidation of a watched key towards the master's being busy, also those of
// a master where the lock was not held (candidates for a leadership, waiters
// trying the masters its holder does not hold, write there all the time): the
// next hold of the name there then had its invalidations put off to the tick,
// and a loss that a DEL on that master completed was heard up to a second late
// (found by TestAttackOutsideRemovalsOverlapOnlyWithinTheLossBound: 157ms to
// 402ms overlaps of leaderships). Only reads that find the key held as before
// count now.
func TestBugLossWatchChurnWhereNotHeldIsNotBusy(t *testing.T) {
	c, m := testCluster(t, 5)
	ctx := context.Background()
	for trial := range 6 {
		key := m.Key("churn")
		for _, s := range c.Servers[3:] {
			require.NoError(t, s.Client().Set(ctx, key, "rl1.other.x", time.Minute).Err())
		}
		l, err := m.Acquire(ctx, "churn", 30*time.Second, WithLossWatch())
		require.NoError(t, err)
		require.Equal(t, 3, l.Votes().Votes, "held on the first three masters only")
		time.Sleep(50 * time.Millisecond) // the watch has read the key everywhere
		for i := range 2 * trackBusy(1) { // others' writes where it is not held
			for _, s := range c.Servers[3:] {
				require.NoError(t, s.Client().Set(ctx, key, fmt.Sprintf("rl1.other%d.x", i), time.Minute).Err())
			}
		}
		require.NoError(t, l.Release(ctx))
		for _, s := range c.Servers[3:] {
			require.NoError(t, s.Client().Del(ctx, key).Err())
		}
		l, err = m.Acquire(ctx, "churn", 30*time.Second, WithLossWatch())
		require.NoError(t, err)
		armed(t, m, l)
		// The loss completes on a master where the key churned: each DEL's
		// verification before it finds the lock held.
		for _, s := range []*redistest.Server{c.Servers[2], c.Servers[4]} {
			require.NoError(t, s.Client().Del(ctx, key).Err())
			time.Sleep(50 * time.Millisecond)
		}
		require.NoError(t, l.Err())
		at := time.Now()
		require.NoError(t, c.Servers[3].Client().Del(ctx, key).Err())
		select {
		case <-l.Done():
			t.Logf("trial %d: Done %v after the last DEL", trial, time.Since(at))
			require.ErrorIs(t, l.Err(), ErrLost)
		case <-time.After(400 * time.Millisecond): // the bound is about 205ms; put off, up to trackPoll
			t.Fatalf("trial %d: a loss completed on a master where the key churned was not heard at once", trial)
		}
		for _, s := range c.Servers {
			require.NoError(t, s.Client().Del(ctx, key).Err())
		}
	}
}
