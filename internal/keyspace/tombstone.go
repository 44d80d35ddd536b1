package keyspace

import (
	"crypto/sha1"
	"encoding/hex"
	"strings"
)

// A revocation (force-expire without -now) replaces a holder's value by its
// tombstone: "rl1x." and the hex SHA-1 of the value. The tombstone is a plain
// string with a TTL (a shared holder's is a member of the shared key, scored
// like one), so that every SET NX, this tool's or a foreign one's, fails on it
// until the revoked holder's validity has surely ended (the lock-delay). The
// holder's release recognises the tombstone of its own value and deletes it (it
// acknowledges), so that the name is free at once; the SHA-1 tells nobody the
// value.

// TombstonePrefix starts every tombstone; the scripts spell it "rl1x.".
const TombstonePrefix = "rl1x."

// Tombstone returns the tombstone that revoking value leaves in its place.
func Tombstone(value string) string {
	sum := sha1.Sum([]byte(value))
	return TombstonePrefix + hex.EncodeToString(sum[:])
}

// IsTombstone reports whether s has the shape of a tombstone (any value's). It
// says nothing of whose.
func IsTombstone(s string) bool {
	if len(s) != len(TombstonePrefix)+2*sha1.Size || !strings.HasPrefix(s, TombstonePrefix) {
		return false
	}
	for _, c := range s[len(TombstonePrefix):] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
