package keyspace

import (
	"crypto/sha256"
	"encoding/base64"
)

// NameTag is the tag of name that every value the lock library writes carries
// (quorum.Owner.For): 36 bits of its SHA-256, base64url, so that a release or an
// extension by token tells a token of another lock from a lock already gone
// without the value giving the name away.
func NameTag(name string) string {
	sum := sha256.Sum256([]byte(name))
	return base64.RawURLEncoding.EncodeToString(sum[:6])[:6]
}
