package admin

import (
	"context"
	"iter"
	"time"
)

// Inspect lists the locks whose names match the glob match ("" or "*" for all;
// Redis MATCH syntax; EscapeGlob for a literal name) on every master, in
// parallel: SCAN (never KEYS) under the key prefix, and per batch of keys their
// PTTL, type and at most ValueReadCap bytes of their value, each batch read
// atomically. Keys longer than 1 MB are not listed. Side keys (names ending
// ":fence" or ":queue": the queues and the waiting flags) are not listed as
// locks; a fence counter is reported in the lock's Fence. Per lock it merges the
// masters' views into a quorum state (LockState), the votes of the
// leading value, the remaining validity from the quorum's view, the decoded
// owner and the guessed library.
//
// It describes, it does not guarantee: a lock may change hands while it is
// read and after. Masters that fail are reported in the listing's Masters and
// in every lock's Masters; the listing is complete as long as a quorum
// answered. When fewer than a quorum answered, Inspect returns the partial
// listing together with an error matching quorum.ErrUnavailable that names the
// failing masters. It writes nothing.
//
// Inspect holds the whole listing in memory; InspectStream reads the same listing
// and hands out one lock at a time.
func (a *Admin) Inspect(ctx context.Context, match string) (*Listing, error) {
	l, err := a.side.Inspect(ctx, match)
	return listingOf(l), err
}

// InspectStream reads the listing that Inspect returns and hands it out in two
// parts: the listing without its Locks (the masters' answers, each one's Keys
// counted) and the locks in name order, one at a time, built as they are
// iterated. The *LockInfo the iterator yields (its Masters and Owner
// too) is reused by the next iteration: copy what you keep. Iterating again yields the locks again.
// The error is Inspect's.
//
// Memory: what the masters reported is kept in a compact table (each name and
// each distinct value once, values capped at ValueReadCap bytes) until the
// iterator is dropped; no lock is built before it is iterated.
func (a *Admin) InspectStream(ctx context.Context, match string) (*Listing, iter.Seq[*LockInfo], error) {
	l, locks, err := a.side.InspectStream(ctx, match)
	return listingOf(l), locksOf(locks), err
}

// NewScanner returns a Scanner of the locks whose names match the glob match ("" or
// "*" for all; Redis MATCH syntax, as in Inspect). It does no I/O.
func (a *Admin) NewScanner(match string) *Scanner {
	return &Scanner{a.side.NewScanner(match)}
}

// Describe reads exactly the given lock names (and their fence counters) on every
// master in one script call per master, and merges them as Inspect does: the fresh
// rows of a long listing. Names that no master holds are absent from the result.
// It writes nothing.
func (a *Admin) Describe(ctx context.Context, names []string) (*Listing, error) {
	l, err := a.side.Describe(ctx, names)
	return listingOf(l), err
}

// Quarantine returns, per master name, when its restart quarantine ends; masters
// that may vote now are absent. The state is what the last connection to each
// master observed; it does no I/O.
func (a *Admin) Quarantine() map[string]time.Time {
	return a.side.Quarantine()
}

// FenceKey returns the key of the fence counter of a lock name (the key prefix,
// the name and ":fence"), for reading the counter; it does no I/O.
func (a *Admin) FenceKey(name string) string {
	return a.side.FenceKey(name)
}
