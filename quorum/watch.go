package quorum

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/redis/go-redis/v9"
)

const opVerify = "verify"

// WithLossWatch makes the lock listen to its name's release notifications (the
// wake-up channel that ReleaseToken, ReleaseHeld and ForceExpire publish on, through
// the Manager's one subscription per master) and Verify itself at once on each, so
// that a force-expire by an administrator cancels its context within a round trip
// instead of at the next extension. A notification lost (a master down, the
// subscription not yet confirmed) only delays the discovery to the next extension
// or to Until; it never affects the guarantees.
func WithLossWatch() LockOption { return func(c *lockConfig) { c.watch = true } }

// Verify checks, with one GET per master, that a quorum still holds the lock's
// value. When the masters that answered show that a majority no longer holds it,
// the lock's context is cancelled and the error matches ErrLost; when too few
// answer to tell, the error matches ErrUnavailable and the lock is left as it is.
// When some master holds the lock's tombstone instead (a revocation: force-expire),
// the error matches ErrRevoked too. It neither extends the lock nor moves Until.
func (l *Lock) Verify(ctx context.Context) error {
	revoked := make([]bool, len(l.m.nodes))
	rep := l.m.fanout(ctx, opVerify, l.key, func(ctx context.Context, n *node) (Outcome, error) {
		if v, ok := l.prim.(verifier); ok {
			out, tomb, err := v.verify(ctx, l, n)
			revoked[l.m.nodeIndex(n)] = tomb
			return out, err
		}
		v, err := n.client.Get(ctx, l.key).Result()
		switch {
		case errors.Is(err, redis.Nil):
			return OutcomeMissing, nil
		case err != nil:
			return OutcomeError, err
		case v != l.value:
			revoked[l.m.nodeIndex(n)] = isTombstoneOf(v, l.value)
			return OutcomeForeign, nil
		}
		return OutcomeOK, nil
	})
	if rep.Votes >= l.m.quorum {
		return nil
	}
	var err error = l.m.roundError(rep)
	if errors.Is(err, ErrLost) {
		if slices.Contains(revoked, true) {
			err = fmt.Errorf("%w: %w", ErrRevoked, err)
		}
		var ev *Event
		l.mu.Lock()
		if !l.released {
			ev = l.lose(err)
		}
		l.mu.Unlock()
		l.report(ev)
	}
	return err
}

// watchKeys returns the keys whose wake-up channels l's loss watch listens on:
// every name of a multi-name lock, else its key.
func (l *Lock) watchKeys() []string {
	if p, ok := l.prim.(*multiLock); ok {
		return p.watchKeys()
	}
	return []string{l.key}
}

// watchLoss verifies the lock on every release notification of its name until the
// lock ends.
func (l *Lock) watchLoss(w *waiter, unregister func()) {
	defer unregister()
	lctx := l.Context()
	for {
		select {
		case <-lctx.Done():
			return
		case <-w.ch:
			ctx, cancel := context.WithTimeout(lctx, 2*l.m.cfg.nodeTimeout)
			_ = l.Verify(ctx)
			cancel()
		}
	}
}
