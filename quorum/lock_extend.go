package quorum

import (
	"context"
	"errors"
	"time"

	"github.com/redlock/redlock/quorum/observe"
)

// Extending a held lock by hand (the keep-alive, keepalive.go, runs the same round).

// Extend resets the lock's TTL to ttl on every master where it is still ours. The
// TTL is validated before any I/O; once Until has passed it fails with ErrLost
// without I/O. On success Until moves to the round's start plus ttl minus drift; an
// extension that completes after Until does not count (the lock was lost at Until
// and Done has fired). A shorter ttl than what is left lowers Until before the
// round is sent; the masters never shorten a key (a late copy of this round must
// not cut back a later, longer extension), so the keys may outlive Until by up to
// the TTL they had. When a
// majority no longer holds the lock the error matches ErrLost and the lock's context
// is cancelled. Extensions of one Lock run one at a time.
func (l *Lock) Extend(ctx context.Context, ttl time.Duration) error {
	if err := l.m.checkTTL(ttl); err != nil {
		return err
	}
	op := l.opChan()
	select {
	case op <- struct{}{}:
	default: // another extension is in flight: wait for it, or for an end
		select {
		case op <- struct{}{}:
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-l.Done():
			return l.Err()
		}
	}
	defer func() { <-op }()
	return l.extendOnce(ctx, ttl)
}

// extendOnce runs one extension round; the caller holds l.op.
func (l *Lock) extendOnce(ctx context.Context, ttl time.Duration) error {
	clk := l.m.cfg.clock
	start := clk.Now()
	l.mu.Lock()
	switch {
	case l.released:
		l.mu.Unlock()
		return ErrReleased
	case l.cause != nil:
		l.mu.Unlock()
		return l.cause
	case !start.Before(l.until):
		err := l.lostCause()
		ev := l.lose(err)
		l.mu.Unlock()
		l.report(ev)
		return err
	}
	if k := l.m.keysUntil(start, ttl); k.After(l.keysUntil) {
		l.keysUntil = k // the masters never shorten a key: the latest round counts
	}
	if bound := start.Add(ttl - l.m.cfg.drift(ttl)); bound.Before(l.until) {
		l.untilFrom = start
		l.setUntil(bound, start)
	}
	l.mu.Unlock()

	until, rep, err := l.extendRound(ctx, ttl)

	var ev *observe.Event
	l.mu.Lock()
	now := clk.Now()
	switch {
	case l.released:
		err = ErrReleased
	case l.cause != nil:
		// The validity ended while the round was in flight: the lock was lost then,
		// whatever the round says now.
		err = l.cause
	case err != nil:
		if errors.Is(err, ErrLost) {
			ev = l.lose(err)
		}
	case !now.Before(l.until):
		err = l.lostCause()
		ev = l.lose(err)
	default:
		l.ttl = ttl
		l.untilFrom = rep.start
		l.setUntil(until, now)
	}
	l.mu.Unlock()
	l.report(ev)
	if l.m.cfg.observer != nil && !errors.Is(err, ErrReleased) {
		l.m.observe(observe.Event{Kind: observe.EventExtend, Name: l.name, Result: resultOf(err, observe.ResultExtended)})
	}
	return err
}
