package quorum

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redlock/redlock/quorum/observe"
)

// TryAcquire makes one round: SET NX PX on every master in parallel. It returns the
// lock when a quorum voted and validity is left; otherwise it releases whatever the
// round set, on every master, and returns a *RoundError matching ErrNotAcquired.
func (m *Manager) TryAcquire(ctx context.Context, name string, ttl time.Duration, opts ...LockOption) (*Lock, error) {
	return m.acquire(ctx, name, ttl, 1, primSpec{}, opts)
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
	return m.acquire(ctx, name, ttl, m.cfg.attempts, primSpec{}, opts)
}

// acquire takes kind of name: one round when attempts is 1.
func (m *Manager) acquire(ctx context.Context, name string, ttl time.Duration, attempts int, kind primSpec, opts []LockOption) (*Lock, error) {
	if m.cfg.observer == nil {
		return m.acquireRounds(ctx, name, ttl, attempts, kind, opts, nil)
	}
	t0 := time.Now()
	rounds := 0
	l, err := m.acquireRounds(ctx, name, ttl, attempts, kind, opts, &rounds)
	m.observe(observe.Event{Kind: observe.EventAcquire, Name: name, Result: resultOf(err, observe.ResultAcquired), Wait: time.Since(t0), Rounds: rounds})
	return l, err
}

// acquireRounds is the acquisition loop; *made, when not nil, counts its rounds.
func (m *Manager) acquireRounds(ctx context.Context, name string, ttl time.Duration, attempts int, kind primSpec, opts []LockOption, made *int) (*Lock, error) {
	a := acquisition{m: m, name: name, ttl: ttl, attempts: attempts, made: made}
	ctx, err := a.begin(ctx, kind, opts)
	defer a.end(ctx)
	if err != nil {
		return nil, err
	}
	for ; ; a.rounds++ {
		if ctx.Err() != nil {
			return nil, a.giveUp(ctx, a.cancelled(ctx))
		}
		if err := a.nextValue(); err != nil {
			return nil, a.giveUp(ctx, err)
		}
		l, err := a.round(ctx)
		if err == nil {
			return l, nil
		}
		if err := a.failed(ctx, err); err != nil {
			return nil, a.giveUp(ctx, err)
		}
		if err := a.wait(ctx); err != nil {
			return nil, a.giveUp(ctx, err)
		}
	}
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
