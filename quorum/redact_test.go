package quorum

import "github.com/redlock/redlock/internal/keyspace"

// redact shortens a lock value for display (keyspace.Redact): a value of this
// package keeps its version and the first 6 characters of its token; full
// tokens of other owners never reach output: the tests' messages show
// values through it, as admin.Redact does.
func redact(value string) string { return keyspace.Redact(value, tokenOf) }

// tokenOf returns the token of a value parseValue reads, and whether it reads it.
func tokenOf(value string) (string, bool) {
	v, err := parseValue(value)
	return v.Token, err == nil
}
