package tui

import (
	"time"

	"github.com/redlock/redlock/quorum"
)

// Event is one lock event a Source saw: a lock acquired, extended, released,
// expired, changed hands, force-expired or revoked, at the quorum level (a
// quorum of masters reported it, or two listings differ by it). The console
// shows it in its history pane; it does not check it against the listing.
type Event struct {
	At   time.Time
	Kind string // one of the Event* kinds
	Name string
	// Value is the lock value concerned: a secret, shown only as admin.Redact
	// shows it.
	Value string
	// Owner is decoded from Value when redlock wrote it (nil otherwise).
	Owner   *quorum.Owner
	Library string   // the library that wrote Value, as admin.Library guesses it
	Masters []string // the masters that reported it
}

// Kinds of events (Event.Kind). The history pane colours an acquisition as good
// news and an expiry or a change of hands as a warning; it shows any other kind
// a Source reports as it is.
const (
	EventAcquired     = "acquired"
	EventExtended     = "extended"
	EventReleased     = "released"
	EventExpired      = "expired"
	EventChangedHands = "changed-hands"
	// EventForceExpired: an administrator deleted the holder's keys.
	EventForceExpired = "force-expired"
	// EventRevoked: an administrator revoked the holder: its value became its
	// tombstone, which keeps the name taken until the holder's validity has ended
	// or it releases.
	EventRevoked = "revoked"
)
