package admin

import (
	"github.com/redlock/redlock/internal/keyspace"
)

// Redact shortens a lock value for display: a value of the lock library keeps
// its version and the first 6 characters of its token ("rl1.3vS4OZ…"; the owner
// is shown decoded, from ParseValue); any other value keeps its first 6
// characters. Full tokens of other owners never reach output. It is what
// LockInfo.RedactedValue returns for the lock's value.
func Redact(value string) string { return keyspace.Redact(value, tokenOf) }

// tokenOf returns the token of a value ParseValue reads, and whether it
// reads it.
func tokenOf(value string) (string, bool) {
	v, err := ParseValue(value)
	return v.Token, err == nil
}
