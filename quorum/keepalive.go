package quorum

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// KeepAlive configures the background extension of a lock. The keep-alive extends
// the lock by its TTL once Fraction of the TTL has passed (counted back from Until;
// never later than 1.25 node timeouts before Until, so that a slow round still
// completes in time; never before a quarter of the TTL), never past MaxExtensions
// extensions or MaxHold after acquisition, and stops on Release. When it cannot
// extend before the validity ends, or is stopped by a cap, the lock's Context is
// cancelled with a cause matching ErrLost at the end of the validity. A TTL that is
// not well above 1.25 node timeouts plus the drift budget cannot be kept alive
// reliably.
type KeepAlive struct {
	// Fraction of the TTL after which to extend, in (0, 1); any other value means
	// defaultKeepAliveFraction.
	Fraction float64
	// MaxExtensions caps the number of extensions; 0 means no cap.
	MaxExtensions int
	// MaxHold caps the total time the lock is held from acquisition; 0 means no cap.
	// The last extension asks only for what is left (at once when the TTL itself
	// outlasts MaxHold), so Until ends up no later than acquisition start + MaxHold
	// once that extension succeeded. The keys on the masters are not shortened by
	// it (extensions never shorten a key): until Release deletes them, another
	// client may have to wait up to one TTL past MaxHold.
	MaxHold time.Duration
}

// WithKeepAlive starts a keep-alive for the acquired lock.
func WithKeepAlive(k KeepAlive) LockOption {
	return func(c *lockConfig) { c.keepAlive = &k }
}

// nextExtension returns when the keep-alive extends a lock valid until until with
// TTL ttl: when frac of the TTL has passed, counted back from until; but early
// enough that a round taking a whole node timeout (and a quarter more for
// scheduling) still completes before until, and never before a quarter of the TTL
// has passed, so a TTL too short for the node timeout does not turn into back-to-back
// rounds.
func (m *Manager) nextExtension(until time.Time, ttl time.Duration, frac float64) time.Time {
	at := until.Add(-time.Duration((1 - frac) * float64(ttl)))
	if latest := until.Add(-m.cfg.nodeTimeout * 5 / 4); at.After(latest) {
		at = latest
	}
	if earliest := until.Add(-ttl * 3 / 4); at.Before(earliest) {
		at = earliest
	}
	return at
}

// keepAlive extends the lock on schedule until Release, a cap, or a definitive loss.
// Its rounds run under ctx, which Release cancels.
func (l *Lock) keepAlive(ctx context.Context, k KeepAlive) {
	defer close(l.kaDone)
	frac := k.Fraction
	if frac <= 0 || frac >= 1 {
		frac = defaultKeepAliveFraction
	}
	clk := l.m.cfg.clock
	holdEnd := time.Time{}
	if k.MaxHold > 0 {
		holdEnd = l.start.Add(k.MaxHold)
	}
	extensions := 0
	l.mu.Lock()
	at := l.m.nextExtension(l.until, l.ttl, frac)
	base := l.until // the deadline at was scheduled for
	if !holdEnd.IsZero() && l.until.After(holdEnd) {
		at = clk.Now() // the TTL outlasts MaxHold: shorten it at once
	}
	l.mu.Unlock()
	for {
		// An Extend to a shorter TTL lowers Until: follow it, or the lock expires
		// before the next extension is even tried.
		l.mu.Lock()
		if l.until.Before(base) {
			if a := l.m.nextExtension(l.until, l.ttl, frac); a.Before(at) {
				at = a
			}
			base = l.until
		}
		changed := l.untilChanged()
		lctx := l.watch()
		l.mu.Unlock()
		t := time.NewTimer(at.Sub(clk.Now()))
		select {
		case <-l.kaStop:
			t.Stop()
			return
		case <-lctx.Done():
			t.Stop()
			return
		case <-changed:
			t.Stop()
			continue
		case <-t.C:
		}
		if k.MaxExtensions > 0 && extensions >= k.MaxExtensions {
			l.capped(fmt.Sprintf("%d extensions", k.MaxExtensions))
			return
		}
		l.mu.Lock()
		ttl := l.ttl
		l.mu.Unlock()
		last := false // this extension reaches the maximum hold: the final one
		if !holdEnd.IsZero() {
			left := holdEnd.Sub(clk.Now()).Truncate(time.Millisecond)
			if left < time.Millisecond {
				l.capped(fmt.Sprintf("maximum hold %v", k.MaxHold))
				return
			}
			if left <= ttl {
				ttl, last = left, true
			}
		}
		err := l.keepAliveRound(ctx, ttl)
		l.mu.Lock()
		until := l.until
		l.mu.Unlock()
		switch {
		case err == nil && last:
			l.capped(fmt.Sprintf("maximum hold %v", k.MaxHold))
			return
		case err == nil:
			extensions++
			at, base = l.m.nextExtension(until, ttl, frac), until
		case errors.Is(err, ErrLost), errors.Is(err, ErrReleased), errors.Is(err, errStopped):
			return
		default:
			// Transient: try again soon, while validity lasts; expire() reports the loss.
			left := until.Sub(clk.Now())
			if left <= 0 {
				return
			}
			at = clk.Now().Add(min(left/4, 4*l.m.cfg.nodeTimeout))
		}
	}
}

// errStopped: the keep-alive was stopped (by Release) while it waited for its turn.
var errStopped = errors.New("keep-alive stopped")

// keepAliveRound runs one extension of the keep-alive, waiting its turn behind a
// user's Extend.
func (l *Lock) keepAliveRound(ctx context.Context, ttl time.Duration) error {
	op := l.opChan()
	select {
	case op <- struct{}{}:
	case <-l.kaStop:
		return errStopped
	case <-l.Done():
		return l.Err()
	}
	defer func() { <-op }()
	select {
	case <-l.kaStop:
		return errStopped
	default:
	}
	return l.extendOnce(ctx, ttl)
}

// stopKeepAlive stops the keep-alive, cancelling a round in flight, and waits for it
// to end.
func (l *Lock) stopKeepAlive() {
	if l.kaStop == nil {
		return
	}
	l.mu.Lock()
	select {
	case <-l.kaStop:
	default:
		close(l.kaStop)
		l.kaCancel()
	}
	l.mu.Unlock()
	<-l.kaDone
}

// capped stops the keep-alive: the lock stays valid until Until, then its context
// is cancelled with a cause matching ErrLost and ErrExtensionCap.
func (l *Lock) capped(why string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lostWhy = fmt.Errorf("%w: %w (%s) for %s", ErrLost, ErrExtensionCap, why, l.name)
	l.fireChanged() // the deadline is now final: watchers re-read it
}

// Capped returns, once the keep-alive has stopped at a cap (MaxExtensions or
// MaxHold), an error matching ErrLost and ErrExtensionCap that names the cap: the
// lock then ends at Until, which no longer moves. It returns nil before, and for a
// lock without a keep-alive. UntilChanged fires when the cap is reached.
func (l *Lock) Capped() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lostWhy
}
