package quorum

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redlock/redlock/internal/wire"
)

// round is one acquisition round: SET NX PX on every master, or the fair queue's
// script when fw is set, or wait_round.lua (SET NX PX, marking where it fails)
// when mk is. A plain SET NX reads the value held where it fails (SET NX GET)
// when holder is set: an acquisition that will try again needs it (splitVote,
// markExclusive), a TryAcquire does not, and the masters spend less without it.
func (m *Manager) round(ctx context.Context, start time.Time, name, key, value string, ttl time.Duration, fw *fairWaiter, mk *waitMark, holder bool) (*Lock, error) {
	ms := ttl.Milliseconds()
	l, rep := m.newLockReport(key) // one allocation for the lock and its reports (hot.go)
	switch {
	case fw != nil:
		m.fairRoundTo(ctx, rep, key, value, ms, fw)
	case mk != nil:
		rep = m.waitRound(ctx, key, value, ms, mk) // a report of its own: the Lock's room stays unused
	default:
		m.setRoundTo(ctx, rep, key, value, ms, holder)
	}
	if until, ok := m.score(rep, start, ttl); ok {
		*l = Lock{m: m, name: name, key: key, value: value, ttl: ttl, votes: *rep, start: start, until: until, untilFrom: start, keysUntil: m.keysUntil(start, ttl), releaseTo: l.releaseTo}
		if fw != nil {
			m.leaveStragglers(backgroundFor(ctx), key, fw, rep)
		}
		return l, nil
	}
	switch {
	case fw != nil:
		m.unwind(backgroundFor(ctx), key, value, fw, rep)
	default:
		m.cleanUp(backgroundFor(ctx), rep, notRefused, nil, func(ctx context.Context, only []bool) {
			m.releaseQuiet(ctx, key, value, only)
		})
	}
	return nil, m.roundError(rep)
}

// keysUntil bounds when the keys a round that started at start sets or extends to
// ttl expire on the masters: a command reaches a master within the node timeout
// or never (its connection is dropped), and the master's clock may run slow by
// the drift budget.
func (m *Manager) keysUntil(start time.Time, ttl time.Duration) time.Time {
	return start.Add(m.cfg.nodeTimeout + ttl + m.cfg.drift(ttl))
}

// unquarantinedVotes turns the votes of quarantined masters into OutcomeQuarantined.
func (m *Manager) unquarantinedVotes(rep *Report, now time.Time) {
	if m.cfg.quarantine <= 0 {
		return
	}
	for i, n := range m.nodes {
		if rep.Nodes[i].Outcome != OutcomeOK {
			continue
		}
		if until := n.quarantinedUntil(now); !until.IsZero() {
			rep.Nodes[i].Outcome = OutcomeQuarantined
			rep.Nodes[i].Err = fmt.Errorf("%w until %s", ErrQuarantined, until.Format(time.RFC3339))
		}
	}
	rep.Votes = rep.count(OutcomeOK)
}

// roundError classifies a failed round. A master not awaited (wire.ErrNotAwaited:
// the round was decided without it) is not counted as down: it may be slow rather
// than stopped (a latency spike), and counting it made a round that the lock's
// holders refused, beside one error reply, say that a quorum of masters was
// unavailable, though every master answered in a fraction of the node timeout.
func (m *Manager) roundError(rep *Report) *RoundError {
	down := rep.count(OutcomeError) + rep.count(OutcomeQuarantined) - notAwaited(rep)
	var kind error
	switch {
	case rep.Votes >= m.quorum:
		kind = ErrTooSlow
	case len(m.nodes)-down < m.quorum:
		kind = ErrUnavailable
	case rep.Op != opAcquire && rep.count(OutcomeForeign)+rep.count(OutcomeMissing) > len(m.nodes)-m.quorum:
		kind = ErrLost
	case rep.Op != opAcquire:
		kind = ErrUnavailable
	default:
		kind = ErrHeld
	}
	return &RoundError{Report: *rep, Kind: kind}
}

// score finishes a round that started at start: it drops the votes of quarantined
// masters, fills Elapsed and Validity (ttl - elapsed - drift) and reports the new
// deadline, start + ttl - drift, when a quorum voted and validity is left.
func (m *Manager) score(rep *Report, start time.Time, ttl time.Duration) (until time.Time, ok bool) {
	now := m.cfg.clock.Now()
	m.unquarantinedVotes(rep, now)
	rep.start = start
	rep.Elapsed = now.Sub(start)
	drift := m.cfg.drift(ttl)
	rep.Validity = ttl - rep.Elapsed - drift
	if rep.Votes >= m.quorum && rep.Validity > 0 {
		return start.Add(ttl - drift), true
	}
	return time.Time{}, false
}

// notAwaited counts the masters of rep whose command was not awaited, the round
// decided without them (wire.ErrNotAwaited).
func notAwaited(rep *Report) int {
	n := 0
	for _, nr := range rep.Nodes {
		if nr.Outcome == OutcomeError && errors.Is(nr.Err, wire.ErrNotAwaited) {
			n++
		}
	}
	return n
}
