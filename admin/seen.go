package admin

import "github.com/redlock/redlock/internal/keyspace"

// Seen is what an operator saw of a lock on one master: the value of a string
// key, or only the type of a key of another type (a Redisson hash). The actions
// that take a map of it, by master name (ForceExpireSeen, RevokeSeen and their
// Listed forms), touch on each master only what was seen there.
type Seen struct {
	Type  string // "string", "hash", ...; "" when nothing was seen there
	Value string // the value of a string key
}

// seenOf converts seen for package quorum's side.
func seenOf(seen map[string]Seen) map[string]keyspace.Seen {
	out := make(map[string]keyspace.Seen, len(seen))
	for master, sn := range seen {
		out[master] = keyspace.Seen(sn)
	}
	return out
}
