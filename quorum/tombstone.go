package quorum

import (
	"crypto/sha1"
	"encoding/hex"
	"strings"
)

// A revocation (admin.Admin.RevokeSeen, force-expire without -now) replaces a
// holder's value by its tombstone: "rl1x." and the hex SHA-1 of the value. The
// tombstone is a plain string with a TTL (a shared holder's is a member of the
// shared key, scored like one), so that every SET NX, this package's or a
// foreign tool's, fails on it until the revoked holder's validity has surely
// ended (the lock-delay). The holder's release recognises the tombstone of its
// own value and deletes it (it acknowledges), so that the name is free at once;
// the SHA-1 tells nobody the value.

// tombstonePrefix starts every tombstone; the scripts spell it "rl1x.".
const tombstonePrefix = "rl1x."

// Tombstone returns the tombstone that revoking value leaves in its place.
func Tombstone(value string) string {
	sum := sha1.Sum([]byte(value))
	return tombstonePrefix + hex.EncodeToString(sum[:])
}

// IsTombstone reports whether s has the shape of a tombstone (any value's). It
// says nothing of whose.
func IsTombstone(s string) bool {
	if len(s) != len(tombstonePrefix)+2*sha1.Size || !strings.HasPrefix(s, tombstonePrefix) {
		return false
	}
	for _, c := range s[len(tombstonePrefix):] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// isTombstoneOf reports whether s is value's tombstone.
func isTombstoneOf(s, value string) bool {
	return strings.HasPrefix(s, tombstonePrefix) && s == Tombstone(value)
}
