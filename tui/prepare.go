package tui

import (
	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/internal/events"
)

// prepBase is what a poll's command needs from the model to prepare the answer:
// the previous answer's locks (immutable once applied), whether this is the
// first answer, and the rows' key in force when the poll began.
type prepBase struct {
	prev  *lockSet // nil before the first answer
	first bool
	key   listKey
}

// prepared is a poll answer made ready off the UI goroutine.
type prepared struct {
	snap   Snapshot
	set    *lockSet       // its locks: the listing indexed, the fresh rows laid over it
	events []historyEntry // lock events since the previous answer
	key    listKey
	rows   []*admin.LockInfo // set.rowsFor(key)
	listed int               // the rows before the filter
}

// prepare indexes the answer's listing (once per listing: a source shares an
// unchanged one between answers) and lays its fresh rows over it, carries the
// countdown spans over, takes the source's events (or, from a source that
// reports none, the differences with the previous answer), and computes the rows
// for b.key.
func (b prepBase) prepare(snap Snapshot) *prepared {
	p := &prepared{snap: snap, key: b.key, set: newLockSet(snap, b.prev)}
	evs := snap.Events
	if snap.EventSource == "" && !b.first && b.prev != nil {
		evs = nil
		for _, ev := range events.Diff(&admin.Listing{Locks: b.prev.merged()}, &admin.Listing{Locks: p.set.merged()}, snap.At) {
			evs = append(evs, Event(ev))
		}
	}
	held := b.key.heldSet()
	for _, ev := range evs {
		p.events = append(p.events, historyEntry{at: ev.At, kind: ev.Kind, name: ev.Name, who: b.who(ev, p.set, held[ev.Name])})
	}
	p.rows, p.listed = p.set.rowsFor(b.key)
	return p
}

// who names the holder of an event's lock as the table shows it: from the event's
// value, else (a release or an expiry carries none) from the row the console
// showed for that name, in the previous answer or this one.
func (b prepBase) who(ev Event, now *lockSet, mine bool) string {
	li := admin.LockInfo{Name: ev.Name, Owner: ev.Owner, Library: ev.Library}
	if mine || li.Owner != nil || known(li.Library) {
		return holderOf(&li, mine)
	}
	for _, set := range []*lockSet{b.prev, now} {
		if set == nil {
			continue
		}
		if row := set.lock(ev.Name); row != nil {
			return holderOf(row, false)
		}
	}
	return holderOf(&li, false)
}

// known reports whether a library guess names a library.
func known(lib string) bool { return lib != "" && lib != "unknown" }

func byName(a, b admin.LockInfo) int { return naturalCompare(a.Name, b.Name) }
