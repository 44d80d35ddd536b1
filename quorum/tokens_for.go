package quorum

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// What a token was taken for. Every value this package writes carries a short
// tag of the name it was taken for (Owner.For: 36 bits of its SHA-256, so the
// name itself is not given away): a release or an extension by token can then
// tell a token of another lock from a lock that is already gone, before it
// touches anything. Values of earlier versions and of other clients carry no
// tag and are taken as they are.

// ErrOtherLock: a token was given for a name it was not taken for.
var ErrOtherLock = errors.New("the token was taken for another lock")

// nameTag is the tag of name carried in values (Owner.For).
func nameTag(name string) string {
	sum := sha256.Sum256([]byte(name))
	return b64.EncodeToString(sum[:6])[:6]
}

// CheckTokenFor reports whether token (a full value, as Lock.Token returns it)
// may be a token of names: the name of a plain lock, a semaphore or a shared
// hold, or every name of a multi-name hold, in any order. It fails, matching
// ErrOtherLock, only when the token says it was taken for another name (a
// multi-name token given fewer or more names is left to ReleaseHeld and
// ExtendHeld, which say how many it holds); a token
// without a tag (an earlier version's, another client's, not a value of this
// package) passes. It does no I/O and says nothing of whether the lock is held.
func CheckTokenFor(token string, names ...string) error {
	var o Owner
	if err := parseValueOwner(token, &o); err != nil || o.For == "" || len(names) == 0 {
		return nil
	}
	if o.Kind == "multi" && o.Count != len(names) {
		return nil // the hold's own check says how many names it needs
	}
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	name := strings.Join(sorted, " ")
	if o.For == nameTag(name) {
		return nil
	}
	what := "lock " + name
	if len(names) > 1 {
		what = "names " + strings.Join(names, ", ")
	}
	return fmt.Errorf("%w: it is not the token of %s (it was taken for another name; nothing was touched)", ErrOtherLock, what)
}
