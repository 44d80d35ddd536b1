package quorum

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redlock/redlock/quorum/observe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A Lock makes its context, expiry timer, UntilChanged channel and extension
// slot only when asked for them (lock.go): these tests hold each to the behaviour
// it had when made at acquisition.

// closedWithin reports whether ch is closed within d.
func closedWithin(ch <-chan struct{}, d time.Duration) bool {
	select {
	case <-ch:
		return true
	default:
	}
	select {
	case <-ch:
		return true
	case <-time.After(d):
		return false
	}
}

func TestLazyUntilChanged(t *testing.T) {
	_, m := testCluster(t, 3)
	ctx := context.Background()
	tests := []struct {
		name string
		// before: extensions made before UntilChanged is first called.
		before int
	}{
		{name: "first called before any extension", before: 0},
		{name: "first called after an extension", before: 1},
		{name: "first called after two extensions", before: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := m.TryAcquire(ctx, "lazy-changed-"+strconv.Itoa(tt.before), 5*time.Second)
			require.NoError(t, err)
			defer func() { _ = l.Release(ctx) }()
			for range tt.before {
				require.NoError(t, l.Extend(ctx, 5*time.Second))
			}
			ch := l.UntilChanged()
			assert.False(t, closedWithin(ch, 10*time.Millisecond), "fired before any change after the call")
			assert.Equal(t, ch, l.UntilChanged(), "a second call before a change watches the same change")
			require.NoError(t, l.Extend(ctx, 5*time.Second))
			assert.True(t, closedWithin(ch, time.Second), "did not fire on the extension")
			next := l.UntilChanged()
			assert.False(t, closedWithin(next, 10*time.Millisecond), "the call after a change watches the next one")
			require.NoError(t, l.Extend(ctx, 4*time.Second)) // a shorter TTL moves Until too
			assert.True(t, closedWithin(next, time.Second), "did not fire on the second extension")
		})
	}
}

func TestLazyDoneAndErrAtUntil(t *testing.T) {
	_, m := testCluster(t, 3)
	ctx := context.Background()
	const ttl = 150 * time.Millisecond
	tests := []struct {
		name string
		// watchAt is when Done is first called, counted from acquisition;
		// negative: never (only Err is asked, after Until).
		watchAt time.Duration
	}{
		{name: "Done called at once", watchAt: 0},
		{name: "Done called before Until", watchAt: ttl / 3},
		{name: "Done first called after Until", watchAt: 2 * ttl},
		{name: "never watched, Err after Until", watchAt: -1},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := m.TryAcquire(ctx, "lazy-done-"+strconv.Itoa(i), ttl)
			require.NoError(t, err)
			require.NoError(t, l.Err(), "held")
			if tt.watchAt >= 0 {
				time.Sleep(tt.watchAt)
				done := l.Done()
				// Closed at Until at the latest (the timer's scheduling aside:
				// generous on a loaded machine, never before Until).
				require.True(t, closedWithin(done, time.Until(l.Until())+2*time.Second), "Done not closed after Until")
				assert.False(t, time.Now().Before(l.Until()), "Done closed before Until")
				assert.ErrorIs(t, context.Cause(l.Context()), ErrLost)
			} else {
				time.Sleep(time.Until(l.Until()) + 10*time.Millisecond)
			}
			assert.ErrorIs(t, l.Err(), ErrLost)
			assert.ErrorIs(t, l.Extend(ctx, ttl), ErrLost, "an extension after Until")
			assert.ErrorIs(t, context.Cause(l.Context()), ErrLost, "a context made after the loss")
			_ = l.Release(ctx)
			assert.ErrorIs(t, l.Err(), ErrLost, "a release after the loss keeps its cause")
		})
	}
}

func TestLazyContextAfterRelease(t *testing.T) {
	_, m := testCluster(t, 3)
	ctx := context.Background()
	for _, watched := range []bool{false, true} {
		t.Run(map[bool]string{false: "never watched", true: "watched before"}[watched], func(t *testing.T) {
			l, err := m.TryAcquire(ctx, "lazy-release", 5*time.Second)
			require.NoError(t, err)
			var before context.Context
			if watched {
				before = l.Context()
				require.NoError(t, before.Err())
			}
			require.NoError(t, l.Release(ctx))
			assert.ErrorIs(t, l.Err(), ErrReleased)
			assert.True(t, closedWithin(l.Done(), 0), "Done open after Release")
			assert.ErrorIs(t, context.Cause(l.Context()), ErrReleased)
			if watched {
				assert.ErrorIs(t, context.Cause(before), ErrReleased)
			}
			assert.ErrorIs(t, l.Extend(ctx, time.Second), ErrReleased)
		})
	}
}

// recorder is an Observer that keeps the events.
type lazyRecorder struct {
	mu  sync.Mutex
	evs []observe.Event
}

func (r *lazyRecorder) Observe(e observe.Event) {
	r.mu.Lock()
	r.evs = append(r.evs, e)
	r.mu.Unlock()
}

func (r *lazyRecorder) lost() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.evs {
		if e.Kind == observe.EventLost {
			n++
		}
	}
	return n
}

func TestLazyObserverHearsLossUnwatched(t *testing.T) {
	rec := &lazyRecorder{}
	_, m := testCluster(t, 3, WithObserver(rec))
	ctx := context.Background()
	l, err := m.TryAcquire(ctx, "lazy-observed", 100*time.Millisecond)
	require.NoError(t, err)
	// Nobody calls Done, Context or Err: the loss is reported at Until all the same.
	require.Eventually(t, func() bool { return rec.lost() == 1 }, 5*time.Second, 5*time.Millisecond)
	assert.ErrorIs(t, l.Err(), ErrLost)
	assert.Equal(t, 1, rec.lost(), "reported once")
}

func TestLazyExtensionsOneAtATime(t *testing.T) {
	_, m := testCluster(t, 3)
	ctx := context.Background()
	l, err := m.TryAcquire(ctx, "lazy-op", 5*time.Second)
	require.NoError(t, err)
	defer func() { _ = l.Release(ctx) }()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = l.Extend(ctx, 5*time.Second)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		assert.NoError(t, err)
	}
	// A waiting extension gives up with the lock: hold the slot, release.
	op := l.opChan()
	op <- struct{}{}
	waiting := make(chan error, 1)
	go func() { waiting <- l.Extend(ctx, 5*time.Second) }()
	time.Sleep(20 * time.Millisecond)
	require.NoError(t, l.Release(ctx))
	select {
	case err := <-waiting:
		assert.True(t, errors.Is(err, ErrReleased), "got %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("a waiting extension did not end with the release")
	}
	<-op
}
