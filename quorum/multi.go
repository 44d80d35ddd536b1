package quorum

import (
	"context"
	"time"
)

// Multi-name locks: several names taken all or none, under one value.
//
// One script per master checks that none of the keys exists and then sets every
// one of them, NX in effect, with the same value and TTL, atomically; a master that
// finds any key taken sets nothing. The round needs a majority of masters that set
// all the keys, like any Redlock round; a failed round releases every key it set on
// every master. No round ever holds some names while it waits for others, so
// overlapping sets taken in any order never deadlock. Extend and Release cover
// every name in one script per master. The keys are ordinary lock keys: a plain
// lock of one of the names (this package's or another Redlock client's SET NX)
// excludes the multi-name hold, and the reverse.

// AcquireMulti takes every one of names or none, retrying as Acquire does; the
// Lock holds them all under one value (Token) and one Until, and Extend, Release,
// the keep-alive and Done cover every name. Names are checked with ValidateName;
// duplicates are an error, and their order does not matter. It cannot be combined
// with WithPermits, WithShared, WithFair or WithFencing (ErrInvalidOption). A
// cancelled ctx gives an error matching both ErrNotAcquired and ctx.Err(); nothing
// is left set on any master.
func (m *Manager) AcquireMulti(ctx context.Context, names []string, ttl time.Duration, opts ...LockOption) (*Lock, error) {
	return m.acquireMulti(ctx, names, ttl, m.cfg.attempts, opts)
}

// TryAcquireMulti is AcquireMulti with one round.
func (m *Manager) TryAcquireMulti(ctx context.Context, names []string, ttl time.Duration, opts ...LockOption) (*Lock, error) {
	return m.acquireMulti(ctx, names, ttl, 1, opts)
}

// Names returns the names a Lock holds: one for a plain lock, permit, shared hold
// or leadership (the name given), every name of a multi-name lock in sorted order.
func (l *Lock) Names() []string {
	if p, ok := l.prim.(*multiLock); ok {
		return append([]string(nil), p.names...)
	}
	return []string{l.name}
}

// multiLock is the primitive of a multi-name hold.
type multiLock struct {
	names []string
	keys  []string
}
