package quorum

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redlock/redlock/internal/keyspace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scanAll steps s until every master that answers has finished a pass, and
// returns how many steps it took.
func scanAll(t *testing.T, s *scanner) int {
	t.Helper()
	for steps := 1; steps < 1000; steps++ {
		_ = s.Step(context.Background())
		if s.Progress().Complete {
			return steps
		}
	}
	t.Fatal("the scan never completed a pass")
	return 0
}

// names returns the lock names of a listing with their states and votes.
func summary(lst *lockListing) map[string]string {
	out := map[string]string{}
	for _, li := range lst.Locks {
		out[li.Name] = fmt.Sprintf("%s %d/%d fence=%d", li.State, li.Votes, li.Total, li.Fence)
	}
	return out
}

// TestScannerMatchesInspect: after a complete pass the incremental listing says
// what a one-shot Inspect says, batch by batch over more keys than one SCAN reads.
func TestScannerMatchesInspect(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3)
	for i, s := range c.Servers {
		pipe := s.Client().Pipeline()
		for j := range 2600 {
			if j%3 == i%3 && j%10 == 0 { // some names on fewer than a quorum
				continue
			}
			pipe.Set(ctx, fmt.Sprintf("lock:bulk/%04d", j), "v", time.Minute)
		}
		_, err := pipe.Exec(ctx)
		require.NoError(t, err)
	}
	lk, err := m.TryAcquire(ctx, "fenced", 10*time.Second, WithFencing())
	require.NoError(t, err)
	defer func() { _ = lk.Release(ctx) }()

	s := m.newScanner("")
	assert.Equal(t, keyspace.ScanProgress{}, s.Progress(), "nothing read yet")
	require.NoError(t, s.Step(ctx))
	p := s.Progress()
	assert.False(t, p.Complete, "2600 keys take more than one batch")
	assert.Greater(t, p.Fraction, 0.0)
	assert.Less(t, p.Fraction, 1.0)
	steps := scanAll(t, s)
	assert.GreaterOrEqual(t, steps, 2)
	got, err := s.Listing()
	require.NoError(t, err)
	want, err := m.inspect(ctx, "")
	require.NoError(t, err)
	assert.Equal(t, summary(want), summary(got))
	assert.Equal(t, keyCounts(want), keyCounts(got))
	assert.Equal(t, 1, s.Progress().Passes)
}

// TestScannerForgetsWhatAPassNoLongerSees: a lock released during a pass shows
// until the next pass completes, then is gone; a lock taken since appears.
func TestScannerForgetsWhatAPassNoLongerSees(t *testing.T) {
	ctx := context.Background()
	_, m := testCluster(t, 3)
	old, err := m.TryAcquire(ctx, "old", 30*time.Second)
	require.NoError(t, err)
	s := m.newScanner("")
	scanAll(t, s)
	require.NoError(t, old.Release(ctx))
	nu, err := m.TryAcquire(ctx, "new", 30*time.Second)
	require.NoError(t, err)
	defer func() { _ = nu.Release(ctx) }()

	lst, err := s.Listing()
	require.NoError(t, err)
	assert.Contains(t, summary(lst), "old", "remembered until the next pass")
	require.NoError(t, s.Step(ctx)) // one batch is the whole pass here
	lst, err = s.Listing()
	require.NoError(t, err)
	assert.NotContains(t, summary(lst), "old")
	assert.Equal(t, "held 3/3 fence=0", summary(lst)["new"])
}

// TestScannerAgesRememberedTTLs: a remembered key whose TTL has run out since it
// was read is not listed, without any further read.
func TestScannerAgesRememberedTTLs(t *testing.T) {
	ctx := context.Background()
	_, m := testCluster(t, 3)
	_, err := m.TryAcquire(ctx, "short", 2*time.Second)
	require.NoError(t, err)
	long, err := m.TryAcquire(ctx, "long", 60*time.Second)
	require.NoError(t, err)
	defer func() { _ = long.Release(ctx) }()
	s := m.newScanner("")
	var mu sync.Mutex
	now := time.Now()
	s.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	scanAll(t, s)
	lst, err := s.Listing()
	require.NoError(t, err)
	require.Contains(t, summary(lst), "short")
	short := lst.Lock("short")
	assert.Greater(t, short.Validity, time.Second)

	mu.Lock()
	now = now.Add(5 * time.Second)
	mu.Unlock()
	lst, err = s.Listing()
	require.NoError(t, err)
	assert.NotContains(t, summary(lst), "short", "its TTL ran out since it was read")
	li := lst.Lock("long")
	require.NotNil(t, li)
	assert.Less(t, li.Deadline().Sub(now), 56*time.Second, "the remembered TTL is aged")
}

// TestScannerMergesOnlyWhatChanged: a pass over keys that did not change merges
// no lock again (the next lockListing holds the same locks, the same slice); a key
// changed on one master, a lock taken and one released are merged or left out at
// the end of the pass that read them; a lock whose validity runs out is merged
// again without any read, and shows so.
func TestScannerMergesOnlyWhatChanged(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3)
	for _, s := range c.Servers {
		pipe := s.Client().Pipeline()
		for j := range 1500 {
			pipe.Set(ctx, fmt.Sprintf("lock:bulk/%04d", j), "v", time.Minute)
		}
		_, err := pipe.Exec(ctx)
		require.NoError(t, err)
	}
	_, err := m.TryAcquire(ctx, "short", 3*time.Second)
	require.NoError(t, err)
	gone, err := m.TryAcquire(ctx, "gone", time.Minute)
	require.NoError(t, err)
	s := m.newScanner("")
	var mu sync.Mutex
	var frozen time.Time // the Scanner's clock, when set
	s.now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		if !frozen.IsZero() {
			return frozen
		}
		return time.Now()
	}
	scanAll(t, s)
	first, err := s.Listing()
	require.NoError(t, err)
	require.Len(t, first.Locks, 1502)
	same := func(a, b *lockInfo) bool { return &a.Masters[0] == &b.Masters[0] }

	// A second pass over the same keys.
	for done := s.Progress().Passes; s.Progress().Passes == done; {
		require.NoError(t, s.Step(ctx))
	}
	second, err := s.Listing()
	require.NoError(t, err)
	require.Len(t, second.Locks, 1502)
	require.Same(t, &first.Locks[0], &second.Locks[0], "the same locks")
	assert.Equal(t, keyCounts(first), keyCounts(second))

	// Changes, read by a third pass.
	require.NoError(t, c.Servers[1].Client().Set(ctx, "lock:bulk/0007", "w", time.Minute).Err())
	require.NoError(t, gone.Release(ctx))
	taken, err := m.TryAcquire(ctx, "taken", time.Minute)
	require.NoError(t, err)
	defer func() { _ = taken.Release(ctx) }()
	for done := s.Progress().Passes; s.Progress().Passes == done; {
		require.NoError(t, s.Step(ctx))
	}
	third, err := s.Listing()
	require.NoError(t, err)
	assert.Nil(t, third.Lock("gone"))
	assert.Equal(t, "held 3/3 fence=0", summary(third)["taken"])
	assert.Equal(t, "held 2/3 fence=0", summary(third)["bulk/0007"])
	assert.False(t, same(second.Lock("bulk/0007"), third.Lock("bulk/0007")))
	assert.True(t, same(second.Lock("bulk/0008"), third.Lock("bulk/0008")))
	assert.Equal(t, stateHeld, third.Lock("short").State)

	// The short lock's validity runs out: no read, yet it is not held any more.
	sh := third.Lock("short")
	mu.Lock()
	frozen = sh.ObservedAt.Add(slices.MaxFunc(sh.Masters, func(a, b masterView) int { return cmp.Compare(a.PTTL, b.PTTL) }).PTTL - time.Millisecond)
	mu.Unlock()
	fourth, err := s.Listing()
	require.NoError(t, err)
	require.NotNil(t, fourth.Lock("short"), "its keys live on a little")
	assert.NotEqual(t, stateHeld, fourth.Lock("short").State)
	assert.True(t, same(third.Lock("bulk/0008"), fourth.Lock("bulk/0008")))
}

// TestScannerWithMastersDown: a failing master shows as not answering and its
// votes are not counted; below a quorum the listing comes with ErrUnavailable.
func TestScannerWithMastersDown(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3)
	lk, err := m.TryAcquire(ctx, "job", 30*time.Second)
	require.NoError(t, err)
	defer func() { _ = lk.Release(ctx) }()
	s := m.newScanner("")
	scanAll(t, s)

	c.Servers[2].Kill()
	require.NoError(t, s.Step(ctx), "a quorum still answers")
	lst, err := s.Listing()
	require.NoError(t, err)
	assert.False(t, lst.Masters[2].Answered)
	assert.Contains(t, lst.Masters[2].Error, "master c")
	assert.Equal(t, "held 2/3 fence=0", summary(lst)["job"])

	c.Servers[1].Kill()
	err = s.Step(ctx)
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrUnavailable))
	lst, err = s.Listing()
	require.True(t, errors.Is(err, ErrUnavailable))
	assert.Equal(t, 1, lst.Answered())
	assert.Equal(t, statePartial, lst.Lock("job").State)
}

// TestDescribeReadsExactNames: Describe reads only the names asked for, glob
// characters included, with their fence counters; absent names are absent.
func TestDescribeReadsExactNames(t *testing.T) {
	ctx := context.Background()
	_, m := testCluster(t, 3)
	var held []*Lock
	for _, name := range []string{"a*", "ab", "[x]", "x"} {
		lk, err := m.TryAcquire(ctx, name, 30*time.Second, WithFencing())
		require.NoError(t, err)
		held = append(held, lk)
	}
	defer func() {
		for _, lk := range held {
			_ = lk.Release(ctx)
		}
	}()
	lst, err := m.describe(ctx, []string{"a*", "[x]", "gone"})
	require.NoError(t, err)
	got := summary(lst)
	assert.Len(t, got, 2)
	assert.Equal(t, "held 3/3 fence=1", got["a*"])
	assert.Equal(t, "held 3/3 fence=1", got["[x]"])

	lst, err = m.describe(ctx, nil)
	require.NoError(t, err)
	assert.Empty(t, lst.Locks)
	assert.Equal(t, 3, lst.Answered())
}

// TestScannerProgressNeverGoesBack: a master that finished its pass counts as read
// while the others go on, so the fraction only grows during a pass.
func TestScannerProgressNeverGoesBack(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3)
	for i, s := range c.Servers {
		pipe := s.Client().Pipeline()
		for j := range []int{1500, 1500, 4000}[i] {
			pipe.Set(ctx, fmt.Sprintf("lock:p/%05d", j), "v", time.Minute)
		}
		_, err := pipe.Exec(ctx)
		require.NoError(t, err)
	}
	s := m.newScanner("")
	last := 0.0
	for steps := 0; !s.Progress().Complete; steps++ {
		require.Less(t, steps, 100)
		require.NoError(t, s.Step(ctx))
		p := s.Progress()
		if !p.Complete {
			assert.GreaterOrEqual(t, p.Fraction, last, "step %d", steps)
			last = p.Fraction
		}
	}
	assert.Greater(t, last, 0.5)
}

// TestScannerPassOverUnchangedKeysAllocatesNothing: once the key space is known,
// a pass that reads it again as it was allocates nothing per key (it took 476
// bytes per key and master when every pass refilled two maps per master and
// merged every lock again), and its lockListing is the previous one's locks.
func TestScannerPassOverUnchangedKeysAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3)
	const locks = 5000
	for _, s := range c.Servers {
		pipe := s.Client().Pipeline()
		for j := range locks {
			pipe.Set(ctx, fmt.Sprintf("lock:bulk/%05d", j), fmt.Sprintf("rl1.%024x", j), time.Hour)
		}
		_, err := pipe.Exec(ctx)
		require.NoError(t, err)
	}
	s := m.newScanner("")
	scanAll(t, s)
	first, err := s.Listing()
	require.NoError(t, err)
	require.Len(t, first.Locks, locks)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for done := s.Progress().Passes; s.Progress().Passes == done; {
		require.NoError(t, s.Step(ctx))
	}
	again, err := s.Listing()
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	perKey := float64(after.TotalAlloc-before.TotalAlloc) / (3 * locks)
	t.Logf("a pass over %d unchanged locks on 3 masters: %.1f bytes allocated per key", locks, perKey)
	assert.Less(t, perKey, 16.0)
	require.Same(t, &first.Locks[0], &again.Locks[0])
	assert.Equal(t, keyCounts(first), keyCounts(again))
}
