package events

import (
	"time"

	"github.com/redlock/redlock/admin"
)

// Held (its zero value: none) is the held locks of one listing, as much of each as a diff needs: its
// value, its deadline and which masters hold the value (each set of masters
// kept once). It is what a poll keeps from one listing to the next in place of
// the listing (about 320 bytes per held lock with its name and a value of this
// package, against some 1,200 for a LockInfo with three MasterViews), and it is
// filled while the listing streams by.
type Held struct {
	locks   map[string]heldLock
	revoked map[string]bool     // the names revoked (admin.StateRevoked)
	sets    map[uint64][]string // the sets of masters, once each (by bit mask)
}

// heldLock is one held lock in a Held.
type heldLock struct {
	value    string
	validity time.Duration
	deadline time.Time
	masters  []string // the masters that hold the value
}

// HeldOf returns the held locks of a whole listing (nil: none).
func HeldOf(l *admin.Listing) *Held {
	h := &Held{locks: map[string]heldLock{}}
	if l != nil {
		for i := range l.Locks {
			h.Add(&l.Locks[i])
		}
	}
	return h
}

// Add records li when it is held; nothing of li is kept but its name, its value
// and the masters' names (strings, which li's reuse does not change).
func (h *Held) Add(li *admin.LockInfo) {
	if li.State == admin.StateRevoked {
		if h.revoked == nil {
			h.revoked = map[string]bool{}
		}
		h.revoked[li.Name] = true
	}
	if li.State != admin.StateHeld {
		return
	}
	if h.locks == nil {
		h.locks = map[string]heldLock{}
	}
	hl := heldLock{value: li.Value, validity: li.Validity, deadline: li.Deadline()}
	var mask uint64
	for i, mv := range li.Masters {
		if mv.Present && mv.Value == li.Value {
			mask |= 1 << (i % 64)
		}
	}
	if set, ok := h.sets[mask]; ok && len(li.Masters) <= 64 && sameMasters(set, li) {
		hl.masters = set
	} else {
		for _, mv := range li.Masters {
			if mv.Present && mv.Value == li.Value {
				hl.masters = append(hl.masters, mv.Master)
			}
		}
		if h.sets == nil {
			h.sets = map[uint64][]string{}
		}
		h.sets[mask] = hl.masters
	}
	h.locks[li.Name] = hl
}

// sameMasters reports whether set is the masters of li that hold its value.
func sameMasters(set []string, li *admin.LockInfo) bool {
	j := 0
	for _, mv := range li.Masters {
		if mv.Present && mv.Value == li.Value {
			if j == len(set) || set[j] != mv.Master {
				return false
			}
			j++
		}
	}
	return j == len(set)
}

// Len returns how many held locks h has.
func (h *Held) Len() int { return len(h.locks) }

// Diff returns the events from h, observed earlier, to cur, observed at now (see
// the package's Diff).
func (h *Held) Diff(cur *Held, now time.Time) []Event {
	var out []Event
	add := func(kind, name string, hl heldLock) {
		ev := Event{At: now, Kind: kind, Name: name, Value: hl.value, Masters: hl.masters}
		describe(&ev)
		out = append(out, ev)
	}
	for name, hl := range cur.locks {
		old, ok := h.locks[name]
		switch {
		case !ok:
			add(Acquired, name, hl)
		case old.value != hl.value:
			add(ChangedHands, name, hl)
		case hl.deadline.After(old.deadline.Add(time.Millisecond * 50)):
			add(Extended, name, hl)
		}
	}
	for name, hl := range h.locks {
		if _, ok := cur.locks[name]; ok {
			continue
		}
		switch {
		case cur.revoked[name]:
			add(Revoked, name, hl)
		case hl.validity != admin.NoExpiry && !now.Before(hl.deadline):
			add(Expired, name, hl)
		default:
			add(Released, name, hl)
		}
	}
	return out
}
