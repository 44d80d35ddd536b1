package keyspace

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

// ForceExpiredMessage is what ForceExpire and ForceExpireSeen publish on a lock's
// wake-up channel where they deleted it (a release publishes the key), so that an
// event stream can tell a force-expire from a release.
const ForceExpiredMessage = "force-expired"

// Seen is what an operator saw of a lock on one master: the value of a string key,
// or only the type of a key of another type (a Redisson hash).
type Seen struct {
	Type  string // "string", "hash", ...; "" when nothing was seen there
	Value string // the value of a string key
}

// RevokedMessage is what a revocation publishes on a lock's wake-up channel
// where it wrote a tombstone, so that an event stream tells it from a release
// and a force-expire that deleted (ForceExpiredMessage).
const RevokedMessage = "revoked"

// ValueReadCap is the most bytes of one value that a listing (Inspect,
// InspectStream, Describe, a Scanner) reads from a master: a longer value is
// read as its first ValueReadCap bytes and its length (MasterView.Truncated and
// Size say so), so that one hostile value of hundreds of megabytes costs a
// listing no more than any other. Every value this package writes is shorter
// (256 bytes at most).
const ValueReadCap = 512
