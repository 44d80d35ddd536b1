package tui

import (
	"slices"
	"time"

	"github.com/redlock/redlock/internal/events"
	"github.com/redlock/redlock/quorum"
)

// span is the countdown reference of one lock: the longest validity seen for its value.
type span struct {
	value string
	max   time.Duration
}

// prepBase is what a poll's command needs from the model to prepare the answer:
// the previous snapshot's locks and spans (immutable once applied), whether this
// is the first answer, and the rows' key in force when the poll began.
type prepBase struct {
	locks []quorum.LockInfo
	spans map[string]span
	first bool
	key   listKey
}

// prepared is a poll answer made ready off the UI goroutine.
type prepared struct {
	snap   Snapshot        // its locks sorted by name
	spans  map[string]span // the countdown reference of every lock
	events []historyEntry  // lock events since the previous answer
	key    listKey
	rows   []quorum.LockInfo // filterSort(snap.Locks, key)
	listed int               // listed(snap.Locks): the rows before the filter
}

// prepare sorts the answer's locks by name (naturally: item-2 before item-10),
// carries the countdown spans over, takes the source's events (or, from a source
// that reports none, the differences with the previous snapshot), and computes
// the rows for b.key.
func (b prepBase) prepare(snap Snapshot) *prepared {
	if !slices.IsSortedFunc(snap.Locks, byName) {
		snap.Locks = slices.Clone(snap.Locks)
		slices.SortStableFunc(snap.Locks, byName)
	}
	p := &prepared{snap: snap, key: b.key, spans: make(map[string]span, len(snap.Locks))}
	for _, li := range snap.Locks {
		sp := span{value: li.Value, max: li.Validity}
		if old, ok := b.spans[li.Name]; ok && old.value == li.Value {
			sp.max = max(sp.max, old.max)
		}
		p.spans[li.Name] = sp
	}
	evs := snap.Events
	if snap.EventSource == "" && !b.first {
		evs = events.Diff(&quorum.Listing{Locks: b.locks}, &quorum.Listing{Locks: snap.Locks}, snap.At)
	}
	held := b.key.heldSet()
	for _, ev := range evs {
		p.events = append(p.events, historyEntry{at: ev.At, kind: ev.Kind, name: ev.Name, who: b.who(ev, snap.Locks, held[ev.Name])})
	}
	p.rows = filterSort(snap.Locks, b.key)
	p.listed = listed(snap.Locks)
	return p
}

// who names the holder of an event's lock as the table shows it: from the event's
// value, else (a release or an expiry carries none) from the row the console
// showed for that name, in this answer or the previous one.
func (b prepBase) who(ev events.Event, now []quorum.LockInfo, mine bool) string {
	li := quorum.LockInfo{Name: ev.Name, Owner: ev.Owner, Library: ev.Library}
	if mine || li.Owner != nil || known(li.Library) {
		return holderOf(&li, mine)
	}
	for _, locks := range [][]quorum.LockInfo{b.locks, now} {
		if i, ok := slices.BinarySearchFunc(locks, ev.Name, func(li quorum.LockInfo, n string) int { return naturalCompare(li.Name, n) }); ok {
			return holderOf(&locks[i], false)
		}
	}
	return holderOf(&li, false)
}

// known reports whether a library guess names a library.
func known(lib string) bool { return lib != "" && lib != "unknown" }

func byName(a, b quorum.LockInfo) int { return naturalCompare(a.Name, b.Name) }
