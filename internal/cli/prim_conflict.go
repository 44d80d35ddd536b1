package cli

import (
	"context"
	"fmt"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/quorum"
)

// One name is one kind of hold, and a semaphore's permit count is stored with
// its holders: before an acquisition, acquire and run read how each name is held
// (admin.Admin.ReadHeldAs) and refuse what cannot be meant, saying why, as
// `consul lock -n` refuses a conflicting limit. The read is no lock: a hold
// taken after it is not seen.

// conflictSlots is how many permit slots a plain or shared acquisition reads to
// learn whether its name is a semaphore's.
const conflictSlots = 8

// checkKindConflict refuses k when its names are held as another kind: a plain,
// shared or multi-name hold of a semaphore's name whose permits are held, a
// semaphore over a name held as a lock (errors matching quorum.ErrHeld: exit 3,
// held by another), or a semaphore of another permit count than its holders
// store (a usage error: exit 2). A failed read refuses nothing: the
// acquisition's own round reports the masters.
func checkKindConflict(ctx context.Context, m *quorum.Manager, k lockKind) error {
	sem := k.kind() == admin.KindSemaphore
	adm := admin.New(m)
	for _, name := range k.names {
		slots := conflictSlots
		if sem {
			slots = k.permits + 1 // slot N is held only under a larger count
		}
		ha, _ := adm.ReadHeldAs(ctx, name, slots)
		switch {
		case sem && ha.Kind == admin.KindSemaphore && ha.Permits > 0 && ha.Permits != k.permits:
			return usagef("-permits %d: semaphore %s is held with %d permits (%d held): every holder gives the same count, acquire it with -permits %d",
				k.permits, name, ha.Permits, ha.Held, ha.Permits)
		case sem && ha.Kind != "" && ha.Kind != admin.KindSemaphore:
			return &kindConflictError{fmt.Sprintf("%s is held as a %s, not as a semaphore: one name is one kind of hold", name, kindWord(ha.Kind))}
		case !sem && ha.Kind == admin.KindSemaphore && ha.Held > 0:
			return &kindConflictError{fmt.Sprintf("%s is a semaphore (%d of %d permits held): one name is one kind of hold, take a permit with -permits %d",
				name, ha.Held, ha.Permits, ha.Permits)}
		}
	}
	return nil
}

// kindConflictError is a name held as another kind of hold: it matches
// quorum.ErrHeld (held by another: exit 3) and says which kind holds it.
type kindConflictError struct{ msg string }

func (e *kindConflictError) Error() string        { return e.msg }
func (e *kindConflictError) Is(target error) bool { return target == quorum.ErrHeld }

// kindWord names a kind of hold in a sentence.
func kindWord(k admin.PrimitiveKind) string {
	switch k {
	case admin.KindMulti:
		return "name of a multi-name hold"
	case admin.KindShared:
		return "shared hold"
	case admin.KindLock:
		return "plain lock"
	}
	return string(k)
}
