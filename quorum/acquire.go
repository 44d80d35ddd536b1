package quorum

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// TryAcquire makes one round: SET NX PX on every master in parallel. It returns the
// lock when a quorum voted and validity is left; otherwise it releases whatever the
// round set, on every master, and returns a *RoundError matching ErrNotAcquired.
func (m *Manager) TryAcquire(ctx context.Context, name string, ttl time.Duration, opts ...LockOption) (*Lock, error) {
	return m.acquire(ctx, name, ttl, 1, opts)
}

// Acquire tries up to the retry policy's number of rounds, sleeping a random delay
// between them, until it takes the lock or ctx ends. A release of the name by anyone
// using this package wakes the waiter at once (pub/sub, one subscription per Manager),
// and a round that follows a wake-up does not use an attempt: a lock that keeps
// changing hands is waited for until ctx ends. With WithFair, waiters take the lock
// in the order they asked for it, and a release wakes only the head of the queue
// (the others keep sleeping: their retry delay is their heartbeat). A cancelled ctx
// gives an error
// matching both ErrNotAcquired and ctx.Err(); nothing is left set on any master.
func (m *Manager) Acquire(ctx context.Context, name string, ttl time.Duration, opts ...LockOption) (*Lock, error) {
	return m.acquire(ctx, name, ttl, m.cfg.attempts, opts)
}

func (m *Manager) acquire(ctx context.Context, name string, ttl time.Duration, attempts int, opts []LockOption) (*Lock, error) {
	if m.cfg.observer == nil {
		return m.acquireRounds(ctx, name, ttl, attempts, opts, nil)
	}
	t0 := time.Now()
	rounds := 0
	l, err := m.acquireRounds(ctx, name, ttl, attempts, opts, &rounds)
	m.observe(Event{Kind: EventAcquire, Name: name, Result: resultOf(err, ResultAcquired), Wait: time.Since(t0), Rounds: rounds})
	return l, err
}

// acquireRounds is the acquisition loop; *made, when not nil, counts its rounds.
func (m *Manager) acquireRounds(ctx context.Context, name string, ttl time.Duration, attempts int, opts []LockOption, made *int) (*Lock, error) {
	// The first round's validity counts from the call itself, so that Until is never
	// later than call start + ttl - drift; later rounds count from their own start.
	start := m.cfg.clock.Now()
	lc := lockOptions(m.cfg.owner, opts)
	var acq acquirer // nil for a plain lock (primitives.go)
	var err error
	if lc.primitive() {
		c := lc // the primitives keep a pointer to it: a plain lock's stays off the heap
		acq, err = m.acquirerFor(name, &c)
	} else {
		err = checkName(name)
	}
	if err != nil {
		return nil, err
	}
	if err := m.checkTTL(ttl); err != nil {
		return nil, err
	}
	if lc.wait > 0 && attempts > 1 {
		attempts = math.MaxInt
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, lc.wait)
		defer cancel()
	}
	owner := m.owner
	owner.Label = lc.owner
	owner.At = time.Now()
	owner.TTL = ttl
	if acq != nil {
		described := owner // owner itself stays off the heap
		acq.describe(&described)
		owner = described
	}
	// Every round writes a value of its own: the clean-up of a failed round
	// (compare-and-delete of its value) may reach a master late, after a later
	// round of this call set its key there, and must not delete that key.
	value, err := newValue(owner)
	if err != nil {
		return nil, err
	}
	key := m.Key(name)
	if acq != nil {
		key = acq.waitKey()
	}
	// A blocking exclusive acquisition keeps new shared holders out while it
	// waits behind shared ones (shared.go).
	var xw *xwaiter
	defer func() {
		if xw != nil {
			xw.clear(backgroundFor(ctx), m)
		}
	}()
	var fw *fairWaiter
	if lc.fair {
		if fw, err = m.newFairWaiter(attempts == 1); err != nil {
			return nil, err
		}
	}
	var (
		last   error
		w      *waiter
		unreg  func()
		mk     *waitMark   // the waiter's marker, once it waits (waitmark.go)
		woken  bool        // the next round follows a wake-up: it does not use an attempt
		delays delayPolicy // made at the first pause
		rounds int
	)
	defer func() {
		if unreg != nil {
			unreg()
		}
	}()
	marked := false // a marker may be left on some master when the acquisition ends
	defer func() {
		if marked {
			m.unmark(backgroundFor(ctx), key, mk)
		}
	}()
	if attempts > 1 {
		if h := m.runningHub(); h != nil {
			w, unreg = h.registerIfSubscribed(key, fw.wakeID())
		}
		if w != nil && marks(acq, fw) {
			// A name waited for recently: the first round marks already.
			if mk, err = m.newWaitMark(); err != nil {
				return nil, err
			}
		}
	}
	for tries := 0; ; rounds++ {
		if err := ctx.Err(); err != nil {
			return nil, m.giveUp(ctx, key, fw, m.cancelled(key, last, ctx))
		}
		if rounds > 0 {
			if value, err = newValue(owner); err != nil {
				return nil, m.giveUp(ctx, key, fw, err)
			}
			start = m.cfg.clock.Now()
		}
		if acq != nil && mk != nil {
			m.markWaiting(ctx, key, mk, ttl)
		}
		roundStart := time.Now()
		var l *Lock
		if acq != nil {
			l, err = acq.round(ctx, start, value, ttl, fw)
		} else {
			l, err = m.round(ctx, start, name, key, value, ttl, fw, mk, attempts > 1)
		}
		if made != nil {
			*made++
		}
		if err == nil && lc.fencing {
			err = m.raiseFence(ctx, l)
		}
		if err == nil && acq != nil {
			err = acq.won(ctx, l)
		}
		// A plain round that won everywhere dropped its marker there.
		marked = mk != nil && (err != nil || acq != nil || l.votes.count(OutcomeOK) < len(m.nodes))
		if err == nil {
			l.start0(lc)
			return l, nil
		}
		if ctx.Err() != nil {
			// The context ended during this round, so its failures say nothing
			// about the lock: report the last round that ran to its end, if any.
			if last == nil {
				last = err
			}
			return nil, m.giveUp(ctx, key, fw, m.cancelled(key, last, ctx))
		}
		last = err
		if acq == nil && attempts > 1 {
			xw = m.markExclusive(ctx, xw, key, last)
		}
		if !woken {
			tries++
		}
		if tries >= attempts || m.closed() { // a closed Manager fails every round
			return nil, m.giveUp(ctx, key, fw, last)
		}
		if w == nil {
			if h := m.hub(); h != nil {
				w, unreg = h.register(key, fw.wakeID())
				// A release between the failed round and the subscription would go
				// unnoticed: once subscribed, try again at once.
				if woken, err = m.subscribed(ctx, w); err != nil {
					return nil, m.giveUp(ctx, key, fw, m.cancelled(key, last, ctx))
				}
				if marks(acq, fw) {
					// Nor does a release before the waiter's marker is in
					// place publish anything: try again at once, marking.
					if mk, err = m.newWaitMark(); err != nil {
						return nil, m.giveUp(ctx, key, fw, err)
					}
					woken = true
				}
				if woken {
					// It follows a release as a woken round does: the waiters that
					// release freed may collide in it (collided).
					continue
				}
			}
		}
		if delays == nil {
			delays = m.newDelayPolicy(fw)
		}
		delay, soon := delays.next(last, woken)
		if woken, err = m.await(ctx, w, roundStart, delay); err != nil {
			return nil, m.giveUp(ctx, key, fw, m.cancelled(key, last, ctx))
		}
		woken = woken || soon // a round after a short pause continues a woken one: no attempt used
	}
}

// giveUp ends a failed acquisition: a fair waiter leaves the queue on every master.
func (m *Manager) giveUp(ctx context.Context, key string, fw *fairWaiter, err error) error {
	if fw != nil {
		m.leave(backgroundFor(ctx), key, fw)
	}
	return err
}

// subscribed waits, at most one node timeout, until w's subscription is confirmed.
// fresh tells whether it had to wait (and so a release may have been missed).
func (m *Manager) subscribed(ctx context.Context, w *waiter) (fresh bool, err error) {
	select {
	case <-w.ready:
		return false, nil
	default:
	}
	t := time.NewTimer(m.cfg.nodeTimeout)
	defer t.Stop()
	select {
	case <-w.ready:
		return true, nil
	case <-t.C:
		return false, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// await sleeps d, or less when w gets a wake-up that arrived after since (the start
// of the round that just failed), or when w's subscription is confirmed only now
// (subscribed gave up waiting for it: a release before the confirmation went
// unheard, so the next round must not wait out the delay). woken tells which.
func (m *Manager) await(ctx context.Context, w *waiter, since time.Time, d time.Duration) (woken bool, err error) {
	if w == nil {
		return false, m.sleep(ctx, d)
	}
	ready := w.ready
	select {
	case <-ready:
		ready = nil // confirmed before: nothing to wait for there
	default:
	}
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			return false, nil
		case <-ctx.Done():
			return false, ctx.Err()
		case <-ready:
			return true, nil
		case <-w.ch:
			if w.wokenAfter(since) {
				return true, nil
			}
		}
	}
}

// cancelled builds the error for an acquisition ended by ctx, keeping the last
// round's report when there was one.
func (m *Manager) cancelled(key string, last error, ctx context.Context) error {
	var re *RoundError
	if errors.As(last, &re) {
		cp := *re
		cp.Cause = context.Cause(ctx)
		if cp.Op != opAcquire {
			// A fencing or term round: the acquisition failed all the same.
			return fmt.Errorf("%w: %w", ErrNotAcquired, &cp)
		}
		return &cp
	}
	return &RoundError{Report: Report{Op: opAcquire, Key: key, Quorum: m.quorum}, Kind: ErrUnavailable, Cause: context.Cause(ctx)}
}

func (m *Manager) sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
