package cli

import (
	"context"
	"sync"
	"time"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/internal/events"
	"github.com/redlock/redlock/tui"
)

// listingLoop keeps the console's full listing in the background, so that no
// poll waits for 100,000 locks to be read: it steps a admin.Scanner batch by
// batch (pausing between batches, see listingPace), publishes the merged listing
// at the end of every pass (and once per interval during the first one, so that
// a large listing fills in as it is read), and starts a new pass no sooner than
// an interval after the last one began. With diffs set it also publishes, as events, the differences
// between consecutive complete passes. Its mutex guards only the published
// fields: it is never held across I/O.
type listingLoop struct {
	interval    time.Duration
	stepTimeout time.Duration
	diffs       bool

	mu        sync.Mutex
	published chan struct{} // closed at the first publication
	lst       *admin.Listing
	err       error
	progress  admin.ScanProgress
	events    []tui.Event

	cancel context.CancelFunc
	done   chan struct{}
}

// listingPace spreads a pass over time: after each batch of every pass but the
// first, the loop pauses for listingPace-1 times as long as the batch took, so the
// listing uses about one core in listingPace however large the key space is (at
// 100,000 locks on five masters a pass then takes 10-15 seconds; the rows on
// screen stay fresh).
const listingPace = 4

// maxPending bounds the events kept between two polls; older ones are dropped.
const maxPending = 1000

// startListing starts the loop over s until stop.
func startListing(s *admin.Scanner, interval, stepTimeout time.Duration, diffs bool) *listingLoop {
	ctx, cancel := context.WithCancel(context.Background())
	l := &listingLoop{interval: interval, stepTimeout: stepTimeout, diffs: diffs, published: make(chan struct{}), cancel: cancel, done: make(chan struct{})}
	go l.run(ctx, s)
	return l
}

// stop ends the loop and waits for it.
func (l *listingLoop) stop() {
	l.cancel()
	<-l.done
}

func (l *listingLoop) run(ctx context.Context, s *admin.Scanner) {
	defer close(l.done)
	var (
		passes    int
		prevPass  []admin.LockInfo // the locks of the last complete pass
		prevHeld  *events.Held     // and the held ones among them
		passStart = time.Now()
		lastPub   time.Time
	)
	for ctx.Err() == nil {
		sctx, cancel := context.WithTimeout(ctx, l.stepTimeout)
		t0 := time.Now()
		stepErr := s.Step(sctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		p := s.Progress()
		passDone := p.Complete && p.Passes > passes
		// Merging is the costly part at scale: after the first pass, a listing is
		// merged only at the end of a pass (or when masters fail); in between only
		// the progress moves.
		if passDone || stepErr != nil || !p.Complete && time.Since(lastPub) >= l.interval {
			lst, err := s.Listing()
			var evs []events.Event
			if passDone {
				// A pass that changed no lock gives the same locks: nothing to compare.
				if l.diffs && (prevHeld == nil || !sameLocks(prevPass, lst.Locks)) {
					held := events.HeldOf(lst)
					if prevHeld != nil {
						evs = prevHeld.Diff(held, lst.ObservedAt)
					}
					prevHeld = held
				}
				prevPass, passes = lst.Locks, p.Passes
			}
			l.publish(lst, err, p, evs)
			lastPub = time.Now()
		} else {
			l.setProgress(p)
		}
		// The batch and its merge, then a pause; the first pass runs at full speed,
		// since the operator is looking at a listing that is not complete yet.
		wait := (listingPace - 1) * time.Since(t0)
		if passes == 0 {
			wait = 0
		}
		switch {
		case passDone:
			wait = max(wait, time.Until(passStart.Add(l.interval)))
			passStart = time.Now().Add(wait)
		case stepErr != nil:
			wait = l.interval // fewer than a quorum answer: try again next interval
		}
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
	}
}

// sameLocks reports whether a and b are the same slice of locks.
func sameLocks(a, b []admin.LockInfo) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// publish makes a listing the one polls take.
func (l *listingLoop) publish(lst *admin.Listing, err error, p admin.ScanProgress, evs []events.Event) {
	l.publishEvents(evs)
	l.mu.Lock()
	defer l.mu.Unlock()
	first := l.lst == nil
	l.lst, l.err, l.progress = lst, err, p
	if first {
		close(l.published)
	}
}

// setProgress updates the progress of the listing polls take.
func (l *listingLoop) setProgress(p admin.ScanProgress) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.progress = p
}

// publishEvents queues events for the next take, keeping the newest maxPending.
func (l *listingLoop) publishEvents(evs []events.Event) {
	if len(evs) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ev := range evs {
		l.events = append(l.events, tui.Event(ev)) // the same fields: the console's own type
	}
	if over := len(l.events) - maxPending; over > 0 {
		l.events = append([]tui.Event(nil), l.events[over:]...)
	}
}

// listingView is what a poll takes from the loop.
type listingView struct {
	lst      *admin.Listing // shared: never changed
	err      error
	progress admin.ScanProgress
}

// peek returns the latest listing, nil before the first, without waiting.
func (l *listingLoop) peek() *admin.Listing {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lst
}

// take returns the latest listing, waiting for the first one until ctx ends.
func (l *listingLoop) take(ctx context.Context) listingView {
	select {
	case <-l.published:
	case <-ctx.Done():
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	v := listingView{lst: l.lst, err: l.err, progress: l.progress}
	if v.lst == nil {
		v.err = ctx.Err()
	}
	return v
}

// drain returns the events published since the previous drain. A poll drains
// last, once its answer is ready, so that only a poll abandoned in the instant
// between drain and delivery loses them.
func (l *listingLoop) drain() []tui.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	evs := l.events
	l.events = nil
	return evs
}
