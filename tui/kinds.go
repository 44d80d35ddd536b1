package tui

import (
	"fmt"

	"github.com/redlock/redlock/admin"
)

// The KIND column: what primitive a row's key belongs to, as `locks` tells them
// apart (lock, multi, sem k/N, shared n, leader tT). The source says it for the
// rows it read afresh (Snapshot.Kinds, from admin.Admin.Primitives); other rows get
// what their key's name, type and value tell alone (kindFromRow).

// kindW is the KIND column's width: "leader t1234", "sem 12/100", "shared 10".
const kindW = 10

// bookkeeping reports whether li is a key that only serves a primitive: an
// election's record, an exclusive waiter's marker, a fence counter or a fair
// queue. `locks` folds these into their primitive, and so does the console:
// they are not rows of their own (a leader's record, which never expires, would
// otherwise show as an orphaned lock).
func bookkeeping(li *admin.LockInfo) bool { return admin.Bookkeeping(li) }

// kindOf is the KIND cell of li: the source's word for it when it has one.
func kindOf(snap *Snapshot, li *admin.LockInfo) string {
	if snap != nil {
		if k, ok := snap.Kinds[li.Name]; ok {
			return k
		}
	}
	return kindFromRow(li)
}

// kindFromRow is what li's key name, type and decoded value tell of its kind
// without reading anything else: the permit count of a semaphore's slot (not how
// many are held), a multi-name hold's name count, that a key is shared or a
// leadership.
func kindFromRow(li *admin.LockInfo) string {
	kc := admin.ClassifyKey(li.Name, li.KeyType())
	switch kc.Kind {
	case admin.KeyPermit:
		if o := li.Owner; o != nil && o.Count > 0 {
			return fmt.Sprintf("sem ?/%d", o.Count)
		}
		return "sem"
	case admin.KeyShared:
		return "shared"
	case admin.KeyLeader:
		return "leader"
	case admin.KeyOther:
		return "other"
	}
	if o := li.Owner; admin.OwnerPrimitive(o) == admin.KindMulti {
		if o.Count > 0 {
			return fmt.Sprintf("multi %d", o.Count)
		}
		return "multi"
	}
	return "lock"
}
