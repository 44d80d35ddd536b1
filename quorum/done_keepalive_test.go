package quorum

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/faults"
)

// doneSlack is how late after Until a Done may be observed: the expiry timer's and
// the observing goroutine's scheduling on a loaded machine. The bug it guards
// against made Done late by most of a node timeout (100ms here).
const doneSlack = 15 * time.Millisecond

// timerLateness arms, beside l's expiry, a timer of its own due at l's deadline
// (re-armed whenever the deadline moves) and returns a function that waits for l's
// Done and says how late that timer fired at the final deadline (or, not fired
// yet, how late it is when Done is seen). That is what the machine did to any
// timer due at that instant (a stall of the whole process under the race detector
// and a loaded machine), and all a test excuses in a late Done beyond doneSlack.
func timerLateness(l *Lock) func() time.Duration {
	var late time.Duration
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		due, fired, _, final := shadowTimer(l, func(t time.Time) time.Time { return t })
		if due.Equal(final) && fired.After(due) {
			late = fired.Sub(due)
		}
	}()
	return func() time.Duration {
		<-finished
		return late
	}
}

// Bug 1: an extension in flight at Until held the lock's mutex, so Done fired only
// when the round gave up, and Until() blocked meanwhile.
func TestBug1DoneFiresAtUntilWhileExtensionInFlight(t *testing.T) {
	t.Parallel()
	s := newScen(t, mutants{}, 3)
	a := s.client("A")
	ctx := context.Background()
	const ttl = 300 * time.Millisecond
	l, err := a.m.TryAcquire(ctx, "review/1", ttl)
	require.NoError(t, err)
	until := l.Until()
	late := timerLateness(l)
	// Two of three masters stop answering: the extension that starts just before
	// Until waits a whole node timeout (100ms) before it fails.
	a.net((*faults.Proxy).Blackhole, "a", "b")
	time.Sleep(time.Until(until.Add(-20 * time.Millisecond)))
	extended := make(chan error, 1)
	go func() { extended <- l.Extend(ctx, ttl) }()
	time.Sleep(5 * time.Millisecond) // the round is in flight

	t0 := time.Now()
	got := l.Until()
	assert.Less(t, time.Since(t0), 5*time.Millisecond, "Until() must not wait for the round in flight")
	assert.Equal(t, until, got, "Until during the round is the deadline before it")

	<-l.Done()
	doneAt := time.Now()
	machine := late()
	assert.LessOrEqual(t, doneAt.Sub(until), doneSlack+machine, "Done fired %v after Until (a timer due then fired %v late)", doneAt.Sub(until), machine)
	assert.ErrorIs(t, l.Err(), ErrLost)
	err = <-extended
	assert.ErrorIs(t, err, ErrLost, "an extension that completes after Until does not count")
	a.net((*faults.Proxy).Heal)

	// The keys expire on the masters no earlier than Until: a rival that polls
	// gets the lock only after the first holder's Done fired.
	b := s.client("B")
	acquiredAt := b.pollAcquire(t, ctx, "review/1", ttl, 2*time.Second)
	assert.True(t, doneAt.Before(acquiredAt), "A's Done (%v) fired after B acquired (%v)", doneAt, acquiredAt)
}

// pollAcquire polls TryAcquire every millisecond until it succeeds (failing the
// test after limit) and returns when the successful call returned.
func (c *client) pollAcquire(t *testing.T, ctx context.Context, name string, ttl, limit time.Duration) time.Time {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		l, err := c.m.TryAcquire(ctx, name, ttl)
		if err == nil {
			at := time.Now()
			t.Cleanup(func() { _ = l.Release(context.Background()) })
			return at
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("%s did not get %s within %v", c.name, name, limit)
	return time.Time{}
}

// Bug 1, with the keep-alive: an extension in flight when the validity ends. The
// holder's Done must fire by Until, before anyone else acquires.
func TestBug1KeepAliveDoneFiresBeforeRivalAcquires(t *testing.T) {
	t.Parallel()
	s := newScen(t, mutants{}, 3)
	a, b := s.client("A"), s.client("B")
	ctx := context.Background()
	const ttl = 400 * time.Millisecond
	// The first extension must succeed for the case to be set up. On a busy
	// machine it may not (the lock then ends, in time, before the fault): take a
	// new lock and try again, a bounded number of times.
	var l *Lock
	for attempt := 0; l == nil; attempt++ {
		require.Less(t, attempt, 10, "the keep-alive's first extension never succeeded")
		var cand *Lock
		err := unstalled(func() (err error) { // a round every master timed out in is the machine's stall
			cand, err = a.m.TryAcquire(ctx, "review/1ka", ttl, WithKeepAlive(KeepAlive{Fraction: 0.5}))
			return err
		})
		require.NoError(t, err)
		select {
		case <-cand.UntilChanged():
			l = cand
		case <-cand.Done():
			t.Logf("attempt %d: the lock ended before its first extension (%v); again", attempt, cand.Err())
			_ = cand.Release(ctx)
		case <-time.After(5 * ttl):
			t.Fatalf("neither an extension nor Done within %v", 5*ttl)
		}
	}
	var doneAt, untilAtDone time.Time
	late := timerLateness(l)
	watched := make(chan struct{})
	go func() {
		<-l.Done()
		doneAt = time.Now()
		untilAtDone = l.Until()
		close(watched)
	}()
	// The first extension succeeds; then A loses two masters, so the second one
	// is in flight, for a whole node timeout, when the validity ends.
	a.net((*faults.Proxy).Blackhole, "a", "b")
	acquiredAt := b.pollAcquire(t, ctx, "review/1ka", ttl, 3*time.Second)
	select {
	case <-watched:
	case <-time.After(10 * time.Second):
		t.Fatal("A's Done never fired, though B acquired")
	}
	assert.ErrorIs(t, l.Err(), ErrLost)
	machine := late()
	assert.LessOrEqual(t, doneAt.Sub(untilAtDone), doneSlack+machine, "A's Done fired %v after its Until (a timer due then fired %v late)", doneAt.Sub(untilAtDone), machine)
	assert.True(t, doneAt.Before(acquiredAt), "A's Done (%v) must fire before B acquired (%v)", doneAt, acquiredAt)
	a.net((*faults.Proxy).Heal)
	_ = l.Release(ctx)
}

// Bug 8: the keep-alive read l.ttl without the mutex while Extend wrote it. Only
// the race detector sees it: the README's test command runs this package with -race.
func TestBug8NoRaceBetweenKeepAliveAndExtend(t *testing.T) {
	_, m := testCluster(t, 3)
	ctx := context.Background()
	l, err := m.TryAcquire(ctx, "review/8", 400*time.Millisecond, WithKeepAlive(KeepAlive{Fraction: 0.1}))
	require.NoError(t, err)
	deadline := time.Now().Add(500 * time.Millisecond)
	for time.Now().Before(deadline) {
		require.NoError(t, l.Extend(ctx, 400*time.Millisecond))
		_ = l.Until()
		time.Sleep(5 * time.Millisecond)
	}
	require.NoError(t, l.Release(ctx))
}

// Bug 9: with a Fraction near 1 the next extension was scheduled frac*TTL after the
// last one returned, past Until once the drift is subtracted: the lock was lost.
func TestBug9KeepAliveFractionNearOneKeepsTheLock(t *testing.T) {
	_, m := testCluster(t, 3, WithNodeTimeout(50*time.Millisecond))
	ctx := context.Background()
	l, err := m.TryAcquire(ctx, "review/9", 300*time.Millisecond, WithKeepAlive(KeepAlive{Fraction: 0.99}))
	require.NoError(t, err)
	select {
	case <-l.Done():
		t.Fatalf("lost the lock: %v", l.Err())
	case <-time.After(1500 * time.Millisecond):
	}
	require.NoError(t, l.Err())
	require.NoError(t, l.Release(ctx))
}
