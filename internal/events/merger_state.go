package events

// What a Merger keeps per lock name, and how that state expires and is forgotten.

import (
	"container/list"
	"time"
)

type due struct {
	ks *keyState
	at time.Time
}

// keyState is what the merger knows about one lock name.
type keyState struct {
	name string
	elem *list.Element
	last time.Time // the last report about the name
	// forced: a force-expire was announced for the name, at forcedAt, and no
	// release or acquisition was reported since.
	forced   bool
	forcedAt time.Time
	// value is the value of the last acquisition emitted, "" after its release.
	value string
	// ended holds, with when, the values whose acquisition ended with an emitted
	// change of hands, or was left out because its quorum was complete only after
	// a later acquisition's: their later reports are absorbed. Kept for the window.
	ended map[string]time.Time
	// held is, per master, what it was last seen to hold (present while the master
	// holds the key).
	held map[string]holding
	// reports are the reports within the window, by kind and value (nil when none).
	reports map[reportKey]*report
}

// holding is one master's copy of a key.
type holding struct {
	// value is the value read after its set ("" when it could not be read).
	value string
	// afterSet: the master's last operation on the key was the set, whose own
	// expire may follow.
	afterSet bool
}

// state returns the state of name, created when new, marked as just reported.
func (m *Merger) state(name string, at time.Time) *keyState {
	ks := m.keys[name]
	if ks == nil {
		ks = &keyState{name: name, held: map[string]holding{}}
		ks.elem = m.lru.PushFront(ks)
		m.keys[name] = ks
		for m.MaxNames > 0 && len(m.keys) > m.MaxNames {
			m.forget(m.lru.Back().Value.(*keyState))
		}
	} else {
		m.lru.MoveToFront(ks.elem)
	}
	ks.last = at
	return ks
}

// expire drops the reports older than the window (forgetting the names left with
// nothing) and the names idle for Idle.
func (m *Merger) expire(now time.Time) {
	for len(m.due) > 0 && now.Sub(m.due[0].at) > m.window {
		ks := m.due[0].ks
		m.due[0] = due{}
		m.due = m.due[1:]
		if m.keys[ks.name] != ks {
			continue
		}
		for k, r := range ks.reports {
			if now.Sub(r.first) > m.window && (r.ev == nil || r.ev.done) {
				delete(ks.reports, k)
			}
		}
		for v, at := range ks.ended {
			if now.Sub(at) > m.window {
				delete(ks.ended, v)
			}
		}
		if len(ks.reports) == 0 {
			ks.reports = nil
		}
		m.forgetIfIdle(ks)
	}
	for e := m.lru.Back(); e != nil && m.Idle > 0; e = m.lru.Back() {
		ks := e.Value.(*keyState)
		if now.Sub(ks.last) <= m.Idle || ks.waiting() {
			break
		}
		m.forget(ks)
	}
}

// before reports whether a master of r, a report of sets, reported its set before
// the set of the value reported held now (ks.value): r's cycle came first (each
// master's reports come in order).
func (ks *keyState) before(r *report) bool {
	cur := ks.reports[reportKey{Acquired, ks.value}]
	for i, x := range r.masters {
		if h, ok := ks.held[x]; ok && h.value == ks.value {
			return true
		}
		if cur == nil {
			continue
		}
		for j, y := range cur.masters {
			if y == x && cur.at[j].After(r.at[i]) {
				return true
			}
		}
	}
	return false
}

// replacing reports whether a change of hands of name waits for the release of
// value, the value it replaces.
func (m *Merger) replacing(name, value string) bool {
	for _, p := range m.pending {
		if p.prev == value && p.ev.Name == name {
			return true
		}
	}
	return false
}

// end records that value's acquisition ended (or was left out) at at.
func (ks *keyState) end(value string, at time.Time) {
	if ks.ended == nil {
		ks.ended = map[string]time.Time{}
	}
	ks.ended[value] = at
}

// waiting reports whether an event of the name has not been emitted yet.
func (ks *keyState) waiting() bool {
	for _, r := range ks.reports {
		if r.ev != nil && !r.ev.done {
			return true
		}
	}
	return false
}

// forgetIfIdle forgets a name no master holds and without reports.
func (m *Merger) forgetIfIdle(ks *keyState) {
	if len(ks.held) == 0 && len(ks.reports) == 0 && !ks.forced {
		m.forget(ks)
	}
}

func (m *Merger) forget(ks *keyState) {
	if m.keys[ks.name] != ks {
		return
	}
	m.lru.Remove(ks.elem)
	delete(m.keys, ks.name)
}
