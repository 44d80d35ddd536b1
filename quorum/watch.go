package quorum

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/redlock/redlock/quorum/observe"
)

const opVerify = "verify"

// WithLossWatch makes the lock hear its loss, whatever removed or replaced its
// value on the masters (a release or force-expire by token, another client's DEL
// or SET, FLUSHALL or FLUSHDB, an eviction, an expiry, a master restarted
// empty), and end its context with an error matching ErrLost soon after fewer
// than a quorum of masters hold the value: a master's invalidation push (client
// tracking on a connection of the watch's own, track.go) or a broken connection
// to a master triggers a read of the value and, when a master no longer holds
// it, Lock.Verify, which alone decides. A notification is never trusted: a
// spurious one costs a read, never a loss; nobody but the master can push on the
// watch's connection. Every lock with a keep-alive is watched so, with or without
// this option.
//
// On a master that refuses RESP3 or CLIENT TRACKING, the watch reads the value
// again every second instead (the release notifications of the wake-up channels
// are not listened to: tracking hears every change they would announce). The watch costs one connection per master and
// Manager (made with the first watched lock), its verifications one more (made
// with the first Verify: a read there never waits behind a write that a master
// holds back) and, per lock, one read per master
// at acquisition and after each change of its keys (its own extensions
// included). A loss the watch cannot see (every notification lost, the masters
// unreachable) is still heard at the next extension or at Until.
func WithLossWatch() LockOption { return func(c *lockConfig) { c.watch = true } }

// Verify checks, with one GET per master (a multi-name lock: one per name; a
// shared holder: a ZSCORE of its member, and one of its tombstone), that a
// quorum still holds the lock's value. These are reads, never scripts: a master
// whose writes are paused (CLIENT PAUSE WRITE, a FAILOVER) answers them at once.
// When the masters that answered show that a majority no longer holds it,
// the lock's context is cancelled and the error matches ErrLost; when too few
// answer to tell, the error matches ErrUnavailable and the lock is left as it is.
// When some master holds the lock's tombstone instead (a revocation: force-expire),
// the error matches ErrRevoked too. A key of another type (a shared holders'
// set) is another holder's, as for an extension. The value on a master in its
// restart quarantine is no vote, as in an acquisition or an extension (it may
// have forgotten the lock and granted it again); such a master that does not
// hold the value counts as one that lost it, as any other. It neither extends
// the lock nor moves Until.
func (l *Lock) Verify(ctx context.Context) error {
	rep, revoked := l.verifyRounds(ctx, l.verifyReads())
	l.m.observeRound(rep)
	// As in an acquisition or an extension, a master in its restart
	// quarantine is no vote: it may have forgotten locks it granted.
	l.m.unquarantinedVotes(rep, l.m.cfg.clock.Now())
	if rep.Votes >= l.m.quorum {
		return nil
	}
	var err error = l.m.roundError(rep)
	if errors.Is(err, ErrLost) {
		if slices.Contains(revoked, true) {
			err = fmt.Errorf("%w: %w", ErrRevoked, err)
		}
		var ev *observe.Event
		l.mu.Lock()
		if !l.released {
			ev = l.lose(err)
		}
		l.mu.Unlock()
		l.report(ev)
	}
	return err
}

// watchKeys returns the keys l's loss watch reads: every name of a multi-name
// lock, else its key.
func (l *Lock) watchKeys() []string {
	if p, ok := l.prim.(*multiLock); ok {
		return p.watchKeys()
	}
	return []string{l.key}
}

// watchLosses starts the loss watch of l: the Manager's trackers read its
// keys on every master. l.mu must be held and l.ctx made.
func (l *Lock) watchLosses() {
	if w := l.m.losses(); w != nil {
		_, member := l.prim.(sharedLock)
		w.add(l, l.watchKeys(), member)
	}
}
