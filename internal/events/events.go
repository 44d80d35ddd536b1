// Package events turns what masters report about lock keys into quorum-level lock
// events: acquired, extended, released, expired, changed hands. Two sources feed
// it: keyspace notifications (one per master and key operation, merged here: an
// event is emitted once a quorum of masters reported it) and snapshot diffs (two
// successive listings compared), the fallback when notifications are off.
package events

import (
	"time"

	"github.com/redlock/redlock/quorum"
)

// Kinds of events.
const (
	ForceExpired = "force-expired"
	Acquired     = "acquired"
	Extended     = "extended"
	Released     = "released"
	Expired      = "expired"
	ChangedHands = "changed-hands"
)

// Event is one quorum-level lock event.
type Event struct {
	At      time.Time
	Kind    string
	Name    string
	Value   string        // the lock value concerned (a secret: show quorum.Redact)
	Owner   *quorum.Owner // decoded from Value when redlock wrote it
	Library string
	Masters []string // the masters that reported it
}

// Merger merges per-master keyspace notifications into quorum-level events. It is
// not safe for concurrent use: feed it from one goroutine.
type Merger struct {
	quorum int
	window time.Duration
	keys   map[string]*keyState
}

// keyState is what the masters reported for one key within the window.
type keyState struct {
	forced bool   // a force-expire was announced for the key
	value  string // the value of the last acquisition emitted
	byKind map[string]*report
}

type report struct {
	value   string
	first   time.Time
	masters []string
}

// NewMerger returns a merger for a cluster needing quorum votes; reports older
// than window are not counted together.
func NewMerger(quorum int, window time.Duration) *Merger {
	return &Merger{quorum: quorum, window: window, keys: map[string]*keyState{}}
}

// Add records that master reported op ("set", "del", "expired", "expire",
// "pexpire", ...) on lock name at at; value is the key's value read right after a
// "set" ("" when unknown). It returns the event once a quorum reported the same
// kind (and, for an acquisition, the same value).
func (m *Merger) Add(master, name, op, value string, at time.Time) *Event {
	kind := ""
	switch op {
	case quorum.ForceExpiredMessage:
		// Announced on the wake-up channel: the coming deletes are a force-expire.
		if ks := m.keys[name]; ks != nil {
			ks.forced = true
		}
		return nil
	case "set":
		kind = Acquired
	case "expire", "pexpire", "expireat", "pexpireat":
		kind = Extended
	case "del":
		kind = Released
	case "expired", "evicted":
		kind = Expired
	default:
		return nil
	}
	ks := m.keys[name]
	if ks == nil {
		ks = &keyState{byKind: map[string]*report{}}
		m.keys[name] = ks
	}
	key := kind
	if kind == Acquired {
		key += "\x00" + value
	}
	r := ks.byKind[key]
	if r == nil || at.Sub(r.first) > m.window {
		r = &report{value: value, first: at}
		ks.byKind[key] = r
	}
	for _, x := range r.masters {
		if x == master {
			return nil
		}
	}
	r.masters = append(r.masters, master)
	if len(r.masters) != m.quorum {
		return nil
	}
	ev := &Event{At: at, Kind: kind, Name: name, Masters: append([]string(nil), r.masters...)}
	switch kind {
	case Acquired:
		ev.Value = value
		if ks.value != "" && ks.value != value && value != "" {
			// A new value over one the quorum held: it changed hands without a
			// release we saw.
			ev.Kind = ChangedHands
		}
		ks.value = value
	case Released:
		ev.Value = ks.value
		if ks.forced {
			ev.Kind = ForceExpired
		}
	default:
		ev.Value = ks.value
	}
	if kind == Released || kind == Expired {
		delete(m.keys, name)
	}
	describe(ev)
	return ev
}

// describe fills the owner and library from the value.
func describe(ev *Event) {
	if ev.Value == "" {
		return
	}
	ev.Library = quorum.Library(ev.Value)
	if v, err := quorum.ParseValue(ev.Value); err == nil {
		o := v.Owner
		ev.Owner = &o
	}
}

// Diff compares two listings taken at now and returns the events between them:
// a new held lock is acquired, a new value changed hands, a lock gone is expired
// when its validity had ended by now and released otherwise, a validity that grew
// is an extension.
func Diff(prev, cur *quorum.Listing, now time.Time) []Event {
	held := func(l *quorum.Listing) map[string]*quorum.LockInfo {
		out := map[string]*quorum.LockInfo{}
		if l == nil {
			return out
		}
		for i := range l.Locks {
			if l.Locks[i].State == quorum.StateHeld {
				out[l.Locks[i].Name] = &l.Locks[i]
			}
		}
		return out
	}
	before, after := held(prev), held(cur)
	var out []Event
	add := func(kind string, li *quorum.LockInfo) {
		ev := Event{At: now, Kind: kind, Name: li.Name, Value: li.Value}
		for _, mv := range li.Masters {
			if mv.Present && mv.Value == li.Value {
				ev.Masters = append(ev.Masters, mv.Master)
			}
		}
		describe(&ev)
		out = append(out, ev)
	}
	for name, li := range after {
		old, ok := before[name]
		switch {
		case !ok:
			add(Acquired, li)
		case old.Value != li.Value:
			add(ChangedHands, li)
		case li.Deadline().After(old.Deadline().Add(time.Millisecond * 50)):
			add(Extended, li)
		}
	}
	for name, li := range before {
		if _, ok := after[name]; ok {
			continue
		}
		if li.Validity != quorum.NoExpiry && !now.Before(li.Deadline()) {
			add(Expired, li)
		} else {
			add(Released, li)
		}
	}
	return out
}
