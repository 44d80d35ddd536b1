package admin

import (
	"context"

	"github.com/redlock/redlock/internal/keyspace"
)

// Scanner lists the locks incrementally, for key spaces too large to read in one
// go (a console over 100,000 locks): each Step reads one SCAN batch from every
// master (SCAN COUNT 1000 and each key's PTTL, type and at most ValueReadCap
// bytes of its value, read as Inspect reads them) and records it in what the
// Scanner remembers, in place, so no single call takes long. Listing returns
// the merged view at any time.
//
// A Scanner's Listing describes and may be stale by up to one pass: a lock
// released since its batch was read still shows until the pass reaches it again
// or its remembered TTL runs out (remembered TTLs are aged by the time since they
// were read). Read the names on screen with Admin.Describe for fresh rows. A
// Scanner writes nothing. It is not safe for concurrent use: one goroutine steps
// it and takes its Listings.
//
// Memory and work: the Scanner keeps one copy of the key space (a row per name,
// a slot per master), whatever the number of passes; a key read again as it was
// allocates nothing, and a lock none of whose keys changed is not merged again:
// the next Listing holds the same LockInfo (see Listing).
type Scanner struct{ s scanSide }

// scanSide is package quorum's scanner, lent through adminlink (side.NewScanner).
type scanSide interface {
	Step(ctx context.Context) error
	Progress() keyspace.ScanProgress
	Listing() (*shape, error)
}

// ScanProgress says how far a Scanner has got.
type ScanProgress struct {
	// Passes is the fewest complete passes of the masters that answered.
	Passes int
	// Fraction estimates how much of the current pass is read, from 0 to 1, over
	// the masters that answered (keys read against the keys counted at the start).
	Fraction float64
	// Complete is true once every master that answered has finished a pass: from
	// then on every lock that existed for a whole pass is in the Listing.
	Complete bool
}

// Step reads the next batch from every master in parallel, each under the
// listing's per-call deadline; a master that has finished the current pass waits
// for the others. A master that fails is reported by Listing as not
// answering until a later Step succeeds on it (retried at most once a second
// while a quorum answers); its pass goes on where it stopped.
// Step returns an error matching quorum.ErrUnavailable when fewer than a quorum answered.
func (s *Scanner) Step(ctx context.Context) error { return s.s.Step(ctx) }

// Progress says how far the passes have got.
func (s *Scanner) Progress() ScanProgress { return ScanProgress(s.s.Progress()) }

// Listing merges what the passes have read so far into a quorum view observed now:
// per master, the keys of the current pass, and those of the previous complete
// pass it has not read again yet; remaining TTLs are aged by the time since each
// key was read, and keys whose TTL ran out are left out. Masters whose last Step
// failed show as not answering; Listing returns the view with an error matching
// quorum.ErrUnavailable when fewer than a quorum answered, as Inspect does.
//
// A lock none of whose keys changed since an earlier Listing, under the same
// masters' answers, and whose state time alone cannot have changed yet (no key
// near its expiry), is that Listing's LockInfo, Masters and Owner shared: its
// ObservedAt is when it was merged, and its Validity and PTTLs count from then
// (its Deadline is the same). The Listings are never changed.
func (s *Scanner) Listing() (*Listing, error) {
	l, err := s.s.Listing()
	return listingOf(l), err
}
