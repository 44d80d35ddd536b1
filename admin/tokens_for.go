package admin

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/redlock/redlock/internal/keyspace"
)

// ErrOtherLock: a token was given for a name it was not taken for.
var ErrOtherLock = errors.New("the token was taken for another lock")

// CheckTokenFor reports whether token (a full value, as quorum.Lock.Token
// returns it) may be a token of names: the name of a plain lock, a semaphore or
// a shared hold, or every name of a multi-name hold, in any order. It fails,
// matching ErrOtherLock, only when the token says it was taken for another name
// (a multi-name token given fewer or more names is left to ReleaseHeld and
// ExtendHeld, which say how many it holds); a token without a tag (an earlier
// version's, another client's, not a value of the lock library) passes. It does
// no I/O and says nothing of whether the lock is held.
func CheckTokenFor(token string, names ...string) error {
	v, err := ParseValue(token)
	if err != nil || v.Owner.For == "" || len(names) == 0 {
		return nil
	}
	if OwnerPrimitive(&v.Owner) == KindMulti && v.Owner.Count != len(names) {
		return nil // the hold's own check says how many names it needs
	}
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	name := strings.Join(sorted, " ")
	if v.Owner.For == keyspace.NameTag(name) {
		return nil
	}
	what := "lock " + name
	if len(names) > 1 {
		what = "names " + strings.Join(names, ", ")
	}
	return fmt.Errorf("%w: it is not the token of %s (it was taken for another name; nothing was touched)", ErrOtherLock, what)
}
