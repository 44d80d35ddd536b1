package admin

import (
	"fmt"

	"github.com/redlock/redlock/internal/adminlink"
	"github.com/redlock/redlock/internal/keyspace"
	"github.com/redlock/redlock/quorum"
)

// Value is a parsed lock value "rl1.<token>.<owner>", as package quorum writes
// it in every key it holds (a Lock's Token is one). Reading it takes nothing and
// proves nothing: the owner is informational, safety rests on the token.
type Value struct {
	// Token is base64url (no padding) of 20 random bytes.
	Token string
	Owner quorum.Owner
}

// ErrBadValue: a string is not a value written by package quorum. Every error
// of ParseValue matches it (errors.Is).
var ErrBadValue = keyspace.ErrBadValue

// valueCodec is what package quorum lends through adminlink.Values (a test
// checks that the two agree).
type valueCodec interface {
	Parse(s string) (string, quorum.Owner, error)
	Format(token string, owner quorum.Owner) string
}

// codec is quorum's codec of values; quorum is initialised before this package.
var codec = linkedCodec()

func linkedCodec() valueCodec {
	c, ok := adminlink.Values.(valueCodec)
	if !ok {
		// A build of mismatched packages, which TestLinkMatches catches
		// before a release.
		panic(fmt.Sprintf("admin: quorum's value codec %T lacks admin's methods", adminlink.Values))
	}
	return c
}

// ParseValue parses a value written by package quorum. It never panics; any
// other string (a lock of another library, a tombstone, garbage) gives an error
// matching ErrBadValue. It does not say whether the value is still held.
func ParseValue(s string) (Value, error) {
	token, owner, err := codec.Parse(s)
	if err != nil {
		return Value{}, err
	}
	return Value{Token: token, Owner: owner}, nil
}

// String formats the value as package quorum stores it in Redis: ParseValue
// reads it back, token and owner alike (Owner.At to the millisecond).
func (v Value) String() string { return codec.Format(v.Token, v.Owner) }
