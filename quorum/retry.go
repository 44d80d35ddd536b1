package quorum

import (
	"errors"
	"math/rand/v2"
	"time"
)

// When a failed round tries again: the whole retry delay (the next release's
// wake-up usually comes first), or a short pause when the waiters a release woke
// collided and nobody will release the lock (splitVote, collided), as the head of a
// fair queue does when the release has not reached every master yet
// (fair.go: releaseInFlight).

// delayPolicy decides how long an acquisition pauses between a failed round and
// the next one. A policy belongs to one acquisition: it may keep state between its
// calls (how many short pauses in a row it gave).
type delayPolicy interface {
	// next returns the pause after the failed round last (woken: last followed a
	// wake-up, a late subscription or a short pause), and soon, whether that pause
	// is a short one: the round after it continues a woken one and uses no attempt.
	// A wake-up may end the pause earlier (await).
	next(last error, woken bool) (d time.Duration, soon bool)
}

// newDelayPolicy returns the delay policy of one acquisition (fw: its fair queue
// place, nil when it is not fair): the configured one, else retryPolicy.
func (m *Manager) newDelayPolicy(fw *fairWaiter) delayPolicy {
	if m.cfg.delays != nil {
		return m.cfg.delays(fw)
	}
	return &retryPolicy{m: m, fw: fw}
}

// retryPolicy is the default delay policy: the whole retry delay, or a short
// pause after a collision (collided), after a split vote once in a row (splitVote),
// or for the head of a fair queue whose release is in flight (releaseInFlight).
type retryPolicy struct {
	m     *Manager
	fw    *fairWaiter // nil when the acquisition is not fair
	short bool        // the last delay was shortened after a split vote
	clash int         // short pauses in a row after collisions (collided)
}

func (p *retryPolicy) next(last error, woken bool) (time.Duration, bool) {
	delay, soon := p.m.retryDelay(), false
	switch {
	case p.fw == nil && collided(last, woken, &p.clash):
		delay, soon = backoffDelay(last, delay, p.clash), true
	case p.fw == nil && !p.short && splitVote(last):
		delay, p.short = shortDelay(last, delay), true
	case p.fw != nil:
		if d, ok := p.fw.releaseInFlight(last, woken, delay); ok {
			delay, soon = d, true
		}
	default:
		p.short = false
	}
	return delay, soon
}

// retryDelay is the whole retry delay: the configured delay, give or take its
// jitter, at random.
func (m *Manager) retryDelay() time.Duration {
	lo := m.cfg.delay - m.cfg.jitter
	return lo + time.Duration(rand.Int64N(int64(2*m.cfg.jitter)+1))
}

// splitVote reports whether last was a split vote: the round won some masters but
// not a quorum, and no other value can hold a quorum either (counting every master
// whose value is unknown, or that did not answer, as the other holder's), so the
// contenders (woken together by a release) collided. Nobody will publish a release
// for a lock that no one holds, so the retry need not wait the whole delay.
func splitVote(last error) bool {
	var re *RoundError
	return errors.As(last, &re) && re.Report.Votes > 0 && errors.Is(re.Kind, ErrHeld) && !otherMayHold(&re.Report)
}

// shortDelay is the retry delay after a split vote: a random pause of up to twice
// the round's duration (at least a millisecond), never above delay. The caller
// never shortens two delays in a row.
func shortDelay(last error, delay time.Duration) time.Duration {
	return backoffDelay(last, delay, 1)
}

// maxCollisions bounds the short pauses in a row of collided.
const maxCollisions = 5

// collided reports whether last, a failed round of a waiter that is not fair, which
// followed a wake-up (woken: heard, or a late subscription) or a pause of this kind, was granted by some masters but
// not by a quorum: the waiters that a release woke together collided, each taking
// some masters. Every one of them then deletes what its round set without publishing
// (a failed round's clean-up is quiet), so when none of them took a quorum the lock
// is free and nobody will release it: each must try again soon, since none can tell
// from its round that nobody won (a shared hold, a multi-name lock or another
// waiter's key may be one holder's, as splitVote counts them). So it tries again after
// a short random pause (backoffDelay, twice as long at each collision in a row)
// instead of its whole retry delay, at most maxCollisions times in a row; *n counts
// them. A round granted nowhere, one that read another holder's value on a quorum
// (oneHolds: that holder's release will wake it), or one that no wake-up started
// keeps the retry delay: a holder on a bare majority is not retried against more
// often than before between its releases.
func collided(last error, woken bool, n *int) bool {
	var re *RoundError
	if !woken || !errors.As(last, &re) || re.Report.Votes == 0 || !errors.Is(re.Kind, ErrHeld) || *n >= maxCollisions || oneHolds(&re.Report) {
		*n = 0
		return false
	}
	*n++
	return true
}

// oneHolds reports whether the round read one other value on a quorum of the
// masters: that holder has the lock, and its release will wake the waiter, so
// trying again soon would only load the masters.
func oneHolds(rep *Report) bool {
	most, _ := holderCounts(rep)
	return most >= rep.Quorum
}

// backoffDelay is a random pause of up to twice the failed round's duration (at
// least a millisecond) times 2^(n-1), the n-th short pause in a row, never above
// delay.
func backoffDelay(last error, delay time.Duration, n int) time.Duration {
	span := backoffSpan(last, n)
	if span == 0 {
		return delay
	}
	return min(time.Duration(rand.Int64N(int64(span))+1), delay)
}

// backoffSpan is the longest n-th short pause in a row after the failed round
// last: twice its duration (at least a millisecond) times 2^(n-1); 0 when last is
// not a round's error.
func backoffSpan(last error, n int) time.Duration {
	var re *RoundError
	if !errors.As(last, &re) {
		return 0
	}
	return max(2*re.Report.Elapsed, time.Millisecond) << min(max(n-1, 0), 30)
}

// otherMayHold reports whether some value other than ours may hold a quorum of rep's
// masters: a known value's count plus the masters whose value is unknown reaches
// the quorum.
func otherMayHold(rep *Report) bool {
	most, unknown := holderCounts(rep)
	return most+unknown >= rep.Quorum
}

// holderCounts returns how many of rep's masters hold the value found most often
// there (other than ours), and how many did not grant the round without telling
// whose value they hold (a key of another type, no reply).
func holderCounts(rep *Report) (most, unknown int) {
	counts := map[string]int{}
	for _, nr := range rep.Nodes {
		switch {
		case nr.Outcome == OutcomeOK:
		case nr.Outcome == OutcomeForeign && nr.holder != "":
			counts[nr.holder]++
			most = max(most, counts[nr.holder])
		default:
			unknown++
		}
	}
	return most, unknown
}
