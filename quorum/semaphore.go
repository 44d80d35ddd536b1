package quorum

import (
	"fmt"
)

// Semaphores: up to N holders of a name.
//
// A semaphore of N permits is N slots, NAME:permit:0 .. NAME:permit:N-1, each a
// Redlock mutex with the majority quorum. An acquisition round runs one script on
// every master that takes the first free slot in slot order there (SET NX PX, one
// value); the round holds the slot that a majority of masters gave it, with the
// validity of a plain lock, and releases every other slot it took on a minority.
// Each slot has at most one holder before its Until by Redlock's argument, so
// there are at most N holders. Counting permits on each master and taking a simple
// majority is NOT safe for N >= 2 (SAFETY.md); this design never counts.

// WithPermits makes the acquisition take one of n permits of the name (a
// semaphore: at most n holders at any instant, under Redlock's assumptions).
// The Lock is the permit: Until, Done, Context, Extend, Release, the keep-alive
// (WithKeepAlive) and WithLossWatch apply to it alone. With WithFencing each
// permit slot has its own counter (Fence is strictly increasing per slot, not per
// name: compare it with Permit). With WithFair waiters take permits in FIFO
// order (all clients of the name must use it). Every client of a name must use
// the same n: clients with different counts share the first slots, so there are
// at most as many holders as the largest count. n must be in [1, MaxPermits]; it
// cannot be combined with WithShared or a multi-name acquisition.
func WithPermits(n int) LockOption { return func(c *lockConfig) { c.permits = n } }

// Permit returns the slot index of a semaphore permit (0 <= Permit < Permits), or
// -1 for a lock that is not a permit.
func (l *Lock) Permit() int {
	if p, ok := l.prim.(*permitLock); ok {
		return p.slot
	}
	return -1
}

// Permits returns the semaphore's permit count N, or 0 for a lock that is not a
// permit.
func (l *Lock) Permits() int {
	if p, ok := l.prim.(*permitLock); ok {
		return p.n
	}
	return 0
}

// permitLock is the primitive of a held permit.
type permitLock struct {
	n    int
	slot int
}

// checkPermits validates a permit count before any I/O.
func checkPermits(n int) error {
	if n < 1 || n > MaxPermits {
		return fmt.Errorf("%w: %d permits, want 1 to %d", ErrInvalidOption, n, MaxPermits)
	}
	return nil
}
