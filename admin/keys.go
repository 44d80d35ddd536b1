package admin

import "github.com/redlock/redlock/internal/keyspace"

// Names and values of the keys the lock library writes, as administration
// needs them. What a key is, from its name and type, is quorum.ClassifyKey.

// WriterWaitingName is the name (without the key prefix) of the marker an
// exclusive waiter keeps beside name while shared holders hold it
// (quorum.KeyWriterWaiting): while it lives, new shared holders of name are
// refused.
func WriterWaitingName(name string) string { return keyspace.WriterWaitingName(name) }

// EscapeGlob escapes the glob characters of a literal for Redis MATCH, so that
// Inspect(ctx, EscapeGlob(name)) lists exactly the lock name.
func EscapeGlob(s string) string { return keyspace.EscapeGlob(s) }

// Tombstone returns the tombstone that revoking value leaves in its place: a
// string ("rl1x." and the hex SHA-1 of value, which tells nobody the value)
// that no acquirer takes, kept for the revoked holder's remaining validity
// (RevokeSeen), and that the holder's own release deletes.
func Tombstone(value string) string { return keyspace.Tombstone(value) }

// IsTombstone reports whether s has the shape of a tombstone (any value's). It
// says nothing of whose.
func IsTombstone(s string) bool { return keyspace.IsTombstone(s) }

// What the actions publish on a lock's wake-up channel where they removed its
// key, so that an event stream tells them from a release (which publishes the
// key's name).
const (
	// ForceExpiredMessage: ForceExpire, ForceExpireSeen or ForceExpireListed
	// deleted the key.
	ForceExpiredMessage = keyspace.ForceExpiredMessage
	// RevokedMessage: a revocation wrote the holder's tombstone.
	RevokedMessage = keyspace.RevokedMessage
)

// ValueReadCap is the most bytes of one value that a listing (Inspect,
// InspectStream, Describe, a Scanner) reads from a master: a longer value is
// read as its first ValueReadCap bytes and its length (quorum.MasterView's
// Truncated and Size say so), so that one hostile value of hundreds of
// megabytes costs a listing no more than any other. Every value the lock
// library writes is shorter (quorum.MaxValueLen).
const ValueReadCap = keyspace.ValueReadCap
