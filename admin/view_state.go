package admin

// One description of each kind of hold, for every surface: which keys are a
// primitive's bookkeeping (never a row or a lock of their own), which primitive
// a listed key belongs to, and the state of a primitive as a whole. `locks`,
// `watch`, the console, the exporter and `events` read these instead of deciding
// for themselves.

// StateFree is the state of a primitive whose keys are listed but hold nobody:
// a semaphore or a shared key whose holders are all gone. Keys are never free
// (a key that holds nobody is not listed).
const StateFree LockState = "free"

// Class is ClassifyKey of a listed key: its name and the type the masters report.
func Class(li *LockInfo) KeyClass { return ClassifyKey(li.Name, li.KeyType()) }

// Bookkeeping reports whether li is a primitive's bookkeeping key
// (KeyKind.Bookkeeping), not a lock of its own.
func Bookkeeping(li *LockInfo) bool { return Class(li).Kind.Bookkeeping() }

// PrimitiveOf says which primitive li belongs to, from its name, type and value
// alone: the kind, and a group that every key of that one primitive shares
// (the semaphore's name for a permit, the token for a multi-name hold's name,
// the name otherwise). ok is false for bookkeeping keys.
func PrimitiveOf(li *LockInfo) (kind PrimitiveKind, group string, ok bool) {
	kc := Class(li)
	switch {
	case kc.Kind.Bookkeeping():
		return "", "", false
	case kc.Kind == KeyPermit:
		return KindSemaphore, kc.Name, true
	case kc.Kind == KeyLeader:
		return KindLeader, kc.Name, true
	case kc.Kind == KeyShared:
		return KindShared, kc.Name, true
	case OwnerPrimitive(li.Owner) == KindMulti && li.Value != "":
		return KindMulti, li.Value, true
	}
	return KindLock, li.Name, true
}

// State is the state of the primitive as a whole, the one every surface shows
// and counts:
//   - a plain lock or a leadership: its key's state;
//   - a multi-name hold: the worst of its names' (held only when every name is);
//   - a semaphore: held when a permit is held on a quorum, else the worst of its
//     slots' (partial: taken on fewer than a quorum, expiring by itself);
//   - shared holders: held when a holder is held on a quorum; partial when some
//     holder is on fewer masters (or the members could not be read and the key
//     is partial); free when the key holds nobody alive.
func (p *Primitive) State() LockState {
	if len(p.Locks) == 0 {
		return StateFree
	}
	switch p.Kind {
	case KindMulti:
		return worstState(p.Locks)
	case KindSemaphore:
		if p.Held > 0 {
			return StateHeld
		}
		return worstState(p.Locks)
	case KindShared:
		if p.Held > 0 {
			return StateHeld
		}
		for _, h := range p.Holders {
			if h.Votes > 0 {
				return StatePartial
			}
		}
		if p.Holders == nil && p.Locks[0].State == StatePartial {
			return StatePartial
		}
		return StateFree
	}
	return p.Locks[0].State
}

// worstState is the state of lis that most needs an administrator.
func worstState(lis []*LockInfo) LockState {
	st := lis[0].State
	for _, li := range lis[1:] {
		if stateRank(li.State) > stateRank(st) {
			st = li.State
		}
	}
	return st
}

// stateRank orders states from healthy to needing an administrator.
func stateRank(s LockState) int {
	switch s {
	case StateHeld:
		return 0
	case StatePartial:
		return 1
	case StateContested:
		return 2
	}
	return 3
}

// Siblings returns the names of l's keys that belong to the same semaphore or
// multi-name hold as one of rows (PrimitiveOf) and are not among rows: what a
// view of a few keys must read too to count the primitive whole (the console's
// filter shows one permit slot; "sem 2/3" needs the other slots). It returns
// nil at once when no row is a permit or a multi-name hold's name; l may be nil.
func Siblings(l *Listing, rows []LockInfo) []string {
	if l == nil {
		return nil
	}
	want := map[string]bool{}
	have := map[string]bool{}
	for i := range rows {
		have[rows[i].Name] = true
		if kind, group, ok := PrimitiveOf(&rows[i]); ok && (kind == KindSemaphore || kind == KindMulti) {
			want[string(kind)+"\x00"+group] = true
		}
	}
	if len(want) == 0 {
		return nil
	}
	var out []string
	for i := range l.Locks {
		li := &l.Locks[i]
		if have[li.Name] {
			continue
		}
		if kind, group, ok := PrimitiveOf(li); ok && want[string(kind)+"\x00"+group] {
			out = append(out, li.Name)
		}
	}
	return out
}
