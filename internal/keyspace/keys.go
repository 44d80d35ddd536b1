// Package keyspace holds what package quorum and package admin both need to
// know of the keys the lock library writes, and of a listing, without quorum
// exporting it: the marker beside a shared hold, a revocation's tombstones,
// what the administrative actions publish, and what an operator saw. Package
// admin re-exports what its users need; quorum's primitives.go has the whole key
// layout.
package keyspace

import "strings"

// XwaitSuffix names an exclusive waiter's marker beside a shared hold's key.
const XwaitSuffix = ":xwait"

// WriterWaitingName is the name (without the key prefix) of the marker an
// exclusive waiter keeps beside name while shared holders hold it: while it
// lives, new shared holders of name are refused.
func WriterWaitingName(name string) string { return name + XwaitSuffix }

// EscapeGlob escapes the glob characters of a literal for Redis MATCH, so that
// a listing of EscapeGlob(name) lists exactly the lock name.
func EscapeGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
