package quorum

import (
	"context"
	"errors"

	"github.com/redlock/redlock/quorum/observe"
)

// WithObserver sets the Observer of every lock of the Manager.
func WithObserver(o observe.Observer) Option { return func(c *config) { c.observer = o } }

// observe hands e to the Observer, if there is one.
func (m *Manager) observe(e observe.Event) {
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
		m.cfg.observer.Observe(observe.Event{Kind: observe.EventMasterRound, Master: nr.Node, Op: rep.Op, Outcome: nr.Outcome.String(), Latency: nr.Latency})
	}
}

// resultOf classifies the error of an acquisition or extension for Event.Result.
func resultOf(err error, acquired string) string {
	switch {
	case err == nil:
		return acquired
	case errors.Is(err, ErrInvalidArgument), errors.Is(err, ErrInvalidName):
		return observe.ResultInvalid
	case errors.Is(err, context.Canceled):
		return observe.ResultCancelled
	case errors.Is(err, ErrTooSlow):
		return observe.ResultTooSlow
	case errors.Is(err, ErrLost):
		return observe.ResultLost
	case errors.Is(err, ErrHeld):
		return observe.ResultHeld
	}
	return observe.ResultUnavailable
}
