package quorum

// Shared holds: any number of shared holders of a name, or one exclusive holder.
//
// Shared holders live AT the lock key, as a sorted set: one member per holder (its
// value), scored by its expiry in server milliseconds; the key's TTL is the latest
// expiry. A plain lock (this package's Acquire, or any peer's SET NX on the key)
// is the exclusive holder: its SET NX fails while the sorted set exists, and a
// shared grant (shared_acquire.lua) fails while the key holds a string. Each grant
// needs a majority of masters, and two majorities share a master whose atomic
// script refused one of them.
//
// An exclusive waiter is not starved by a stream of shared holders: when a round
// of a blocking Acquire (not WithShared) meets shared holders, it sets NAME:xwait
// on every master (a marker with a short TTL, refreshed by each of its rounds), and
// no new shared grant is made on a master while the marker lives. The marker is
// deleted when the waiter acquires or gives up; a waiter that dies leaves it for at
// most its TTL (the fair queue's heartbeat TTL).

// WithShared takes a shared hold of the name: any number of shared holders, or one
// exclusive holder (a plain lock of the same name, from this package or any
// Redlock client's SET NX on the key), never both, under Redlock's assumptions.
// The Lock is this holder's share: Until, Done, Extend, Release and the keep-alive
// apply to it alone. It cannot be combined with WithPermits, WithFair, WithFencing
// or a multi-name acquisition (ErrInvalidOption). A blocking exclusive Acquire of
// the name keeps new shared holders out while it waits, so it is not starved.
func WithShared() LockOption { return func(c *lockConfig) { c.shared = true } }

// Shared reports whether the Lock is a shared hold (WithShared).
func (l *Lock) Shared() bool {
	_, ok := l.prim.(*sharedLock)
	return ok
}

// sharedLock is the primitive of a shared hold.
type sharedLock struct{}
