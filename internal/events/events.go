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
