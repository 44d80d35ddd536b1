package quorum

import (
	"strings"

	"github.com/redlock/redlock/internal/keyspace"
)

// A revocation (admin.Admin.RevokeSeen, force-expire without -now) replaces a
// holder's value by its tombstone (keyspace.Tombstone) for the key's remaining
// TTL plus its drift budget; the holder's release recognises the tombstone of
// its own value and deletes it, so that the name is free at once.

// tombstonePrefix starts every tombstone; the scripts spell it "rl1x.".
const tombstonePrefix = keyspace.TombstonePrefix

// isTombstoneOf reports whether s is value's tombstone.
func isTombstoneOf(s, value string) bool {
	return strings.HasPrefix(s, tombstonePrefix) && s == keyspace.Tombstone(value)
}
