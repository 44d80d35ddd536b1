package quorum

import "github.com/redlock/redlock/internal/keyspace"

// What a token was taken for. Every value this package writes carries a short
// tag of the name it was taken for (Owner.For, keyspace.NameTag): a release or
// an extension by token (admin.CheckTokenFor) can then tell a token of another
// lock from a lock that is already gone, before it touches anything. Values of
// earlier versions and of other clients carry no tag and are taken as they are.

// nameTag is the tag of name carried in values (Owner.For).
func nameTag(name string) string { return keyspace.NameTag(name) }
