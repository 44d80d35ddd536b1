// Package observe holds the events a quorum.Manager reports to an Observer
// (quorum.WithObserver): what its locks did (acquisitions, extensions,
// releases, losses) and what its masters answered. It is for metrics and logs;
// package metrics turns these events into Prometheus metrics. A program that
// only takes locks never needs it.
package observe

import "time"

// Observer receives what a Manager's locks do, for metrics and logs. Observe is
// called synchronously from the goroutine that did the work, after a round has
// ended and outside every lock's mutex: it never delays a round in flight, but a
// slow Observe delays the caller's next step, so it must return quickly (update
// counters, hand off to a channel) and must not call back into the Manager. The
// quorum package imports no metrics library; package metrics is a Prometheus
// Observer. Without an Observer nothing is built or called.
type Observer interface {
	Observe(Event)
}

// EventKind says what an Event reports.
type EventKind int

// Event kinds.
const (
	// EventAcquire: an Acquire or TryAcquire returned (Result, Wait, Rounds).
	EventAcquire EventKind = iota
	// EventExtend: an extension round ended, by Extend or the keep-alive (Result).
	EventExtend
	// EventRelease: Release was called on a held lock (Held).
	EventRelease
	// EventLost: a held lock was lost (Cause, Held).
	EventLost
	// EventMasterRound: one master answered (or failed) one command (Master, Op,
	// Outcome, Latency).
	EventMasterRound
	// EventQuarantine: a master entered the restart quarantine until Until.
	EventQuarantine
	// EventConnDropped: the connection of the hot commands to Master was closed
	// (Err says why: no reply within the node timeout, a reply out of step, a
	// reset, an idle connection the master had closed). The commands in flight on
	// it failed; the next command dials a new connection.
	EventConnDropped
	// EventLateReply: Master answered a command after its round had given up (its
	// deadline, a cancellation); the reply was read and thrown away, and the
	// connection stays in use. Many of them mean the node timeout is too short for
	// that master.
	EventLateReply
)

// Results of acquisitions and extensions, as Event.Result reports them: a small
// fixed set, fit for a metric label.
const (
	ResultAcquired    = "acquired"
	ResultHeld        = "held"
	ResultUnavailable = "unavailable"
	ResultTooSlow     = "too_slow"
	ResultCancelled   = "cancelled"
	ResultExtended    = "extended"
	ResultLost        = "lost"
	ResultInvalid     = "invalid"
)

// Causes of a loss, as Event.Cause reports them: a small fixed set, fit for a
// metric label.
const (
	CauseExpired  = "expired"       // the validity ended without an extension
	CauseCap      = "extension_cap" // a keep-alive cap (MaxExtensions, MaxHold) was reached
	CauseMajority = "majority_lost" // a majority of masters no longer holds the lock
)

// Event is one thing a Manager observed. Only the fields of its Kind are set.
type Event struct {
	Kind EventKind
	// Name is the lock name (not set for master rounds and quarantine). It is
	// unbounded: never use it as a metric label.
	Name   string
	Result string
	Cause  string
	// Wait is how long an acquisition took; Rounds how many rounds it made.
	Wait   time.Duration
	Rounds int
	// Held is how long the lock was held, from acquisition to release or loss.
	Held time.Duration
	// Master, Op, Outcome and Latency describe one master's answer. Outcome is
	// the name of the master's quorum.Outcome (quorum.OutcomeError.String() is
	// "error"): one of ok, missing, foreign, error, quarantined, fit for a
	// metric label.
	Master  string
	Op      string
	Outcome string
	Latency time.Duration
	// Until is the end of a quarantine.
	Until time.Time
	// Err is why a connection was dropped.
	Err error
}
