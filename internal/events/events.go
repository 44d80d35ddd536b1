// Package events turns what masters report about lock keys into quorum-level lock
// events: acquired, extended, released, expired, changed hands. Two sources feed
// it: keyspace notifications (one per master and key operation, merged here: an
// event is emitted once a quorum of masters reported it) and snapshot diffs (two
// successive listings compared), the fallback when notifications are off.
package events

import (
	"time"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/quorum"
)

// Kinds of events.
const (
	ForceExpired = "force-expired"
	// Revoked: an administrator revoked the holder (force-expire without -now): its
	// value became its tombstone, which keeps the name taken until the holder's
	// validity has ended or it releases.
	Revoked      = "revoked"
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
	Value   string        // the lock value concerned (a secret: show admin.Redact)
	Owner   *quorum.Owner // decoded from Value when redlock wrote it
	Library string
	Masters []string // the masters that reported it
}

// describe fills the owner and library from the value.
func describe(ev *Event) {
	if ev.Value == "" {
		return
	}
	ev.Library = admin.Library(ev.Value)
	if v, err := admin.ParseValue(ev.Value); err == nil {
		o := v.Owner
		ev.Owner = &o
	}
}

// Diff compares two listings taken at now and returns the events between them:
// a new held lock is acquired, a new value changed hands, a lock gone is expired
// when its validity had ended by now and released otherwise, a validity that grew
// is an extension. Tracker does the same for listings that stream by.
func Diff(prev, cur *admin.Listing, now time.Time) []Event {
	return HeldOf(prev).Diff(HeldOf(cur), now)
}
