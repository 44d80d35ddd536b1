package quorum

import (
	"context"
	"errors"
	"time"
)

// Observer receives what a Manager's locks do, for metrics and logs. Observe is
// called synchronously from the goroutine that did the work, after a round has
// ended and outside every lock's mutex: it never delays a round in flight, but a
// slow Observe delays the caller's next step, so it must return quickly (update
// counters, hand off to a channel) and must not call back into the Manager. The
// package itself imports no metrics library; package metrics is a Prometheus
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

// Causes of a loss, as Event.Cause reports them.
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
	// Master, Op, Outcome and Latency describe one master's answer.
	Master  string
	Op      string
	Outcome Outcome
	Latency time.Duration
	// Until is the end of a quarantine.
	Until time.Time
	// Err is why a connection was dropped.
	Err error
}

// WithObserver sets the Observer of every lock of the Manager.
func WithObserver(o Observer) Option { return func(c *config) { c.observer = o } }

// observe hands e to the Observer, if there is one.
func (m *Manager) observe(e Event) {
	if m.cfg.observer != nil {
		m.cfg.observer.Observe(e)
	}
}

// observeRound reports each master's answer of a round.
func (m *Manager) observeRound(rep *Report) {
	if m.cfg.observer == nil || rep == nil {
		return
	}
	for _, nr := range rep.Nodes {
		m.cfg.observer.Observe(Event{Kind: EventMasterRound, Master: nr.Node, Op: rep.Op, Outcome: nr.Outcome, Latency: nr.Latency})
	}
}

// resultOf classifies the error of an acquisition or extension for Event.Result.
func resultOf(err error, acquired string) string {
	switch {
	case err == nil:
		return acquired
	case errors.Is(err, ErrInvalidTTL), errors.Is(err, ErrInvalidName):
		return ResultInvalid
	case errors.Is(err, context.Canceled):
		return ResultCancelled
	case errors.Is(err, ErrTooSlow):
		return ResultTooSlow
	case errors.Is(err, ErrLost):
		return ResultLost
	case errors.Is(err, ErrHeld):
		return ResultHeld
	}
	return ResultUnavailable
}
