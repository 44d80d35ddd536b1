package quorum

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"

	"github.com/redlock/redlock/internal/keyspace"
	"github.com/redlock/redlock/internal/wire"
)

// fenceSuffix names the fence counter key beside a lock key.
const fenceSuffix = keyspace.FenceSuffix

const (
	opFenceRead  = "fence-read"
	opFenceRaise = "fence-raise"
	replyStale   = -2
)

var (
	//go:embed scripts/fence_read.lua
	fenceReadLua string
	//go:embed scripts/fence.lua
	fenceRaiseLua string

	fenceReadScript  = wire.NewScript(fenceReadLua)
	fenceRaiseScript = wire.NewScript(fenceRaiseLua)
)

// errFenceStale: a master's fence counter was already at or above the fence an
// acquisition tried to set (a newer holder, or a read that missed a master).
var errFenceStale = errors.New("fence counter already at or above the new fence")

// WithFencing gives the acquisition a fencing token (Lock.Fence). Acquiring with
// fencing costs two more rounds: read the counter from every master that answers
// (only reads from a quorum that holds our lock count, but a higher counter read
// anywhere raises the next number), then raise it to max+1 on a quorum, comparing
// our lock value inside the script; when either round misses a quorum, a master
// reports a counter at or above the new number, or the validity runs out, the
// acquisition fails and its keys are released. The counter lives on every master
// under the lock key plus ":fence", without a TTL: one key per lock name.
//
// What holds: the new fence is strictly greater than every earlier one as long as,
// when the read runs, some master that answers still has the previous fence (it
// was written to a quorum, so this holds unless every master of that quorum that
// answers has lost its data since). Masters losing data without appendfsync always
// can make a number repeat when the survivors holding it do not answer the read.
func WithFencing() LockOption { return func(c *lockConfig) { c.fencing = true } }

// fenceKey is admin.Admin.FenceKey, which documents it.
func (m *Manager) fenceKey(name string) string { return m.Key(name) + fenceSuffix }

// raiseFence sets l.fence, or releases l and returns an error matching
// ErrNotAcquired (and a *RoundError naming the masters).
func (m *Manager) raiseFence(ctx context.Context, l *Lock) error {
	fkey := l.key + fenceSuffix
	next, err := m.raiseCounter(ctx, l, fkey, "fencing", func(ctx context.Context, next int64) *Report {
		return m.scriptOnAll(ctx, opFenceRaise, l.key, fenceRaiseScript, []string{l.key, fkey}, func(_ int, r int64) (Outcome, error) {
			return raised(r, next)
		}, l.value, strconv.FormatInt(next, 10))
	})
	if err == nil {
		l.fence = next
	}
	return err
}

// raiseCounter hands l the next number of counter (a fence, an election's term):
// it reads the counter from every master that answers (only the masters that
// hold l count towards the quorum, but a higher counter read anywhere raises the
// next number), then raises it to max+1 on a quorum with raise, a round of a
// script that compares l's value and answers replyStale when the counter is
// already at or above the new number (raised reads its reply). On failure it
// releases l and returns an error matching ErrNotAcquired that names what (the
// number's use).
func (m *Manager) raiseCounter(ctx context.Context, l *Lock, counter, what string, raise func(ctx context.Context, next int64) *Report) (int64, error) {
	var highest int64
	rep := m.scriptOnAll(ctx, opFenceRead, l.key, fenceReadScript, []string{l.key, counter}, func(_ int, r int64) (Outcome, error) {
		if r < 0 { // not ours here: -1 - counter
			highest = max(highest, -1-r)
			return OutcomeForeign, nil
		}
		highest = max(highest, r)
		return OutcomeOK, nil
	}, l.value)
	if err := m.fenceRound(l, rep); err != nil {
		return 0, err
	}
	next := highest + 1
	rep = raise(ctx, next)
	if err := m.fenceRound(l, rep); err != nil {
		return 0, err
	}
	// A master that did not answer the read but holds a counter at or above next
	// means next may repeat an earlier number: give the lock up rather than hand
	// out a number that does not fence.
	for _, nr := range rep.Nodes {
		if errors.Is(nr.Err, errFenceStale) {
			m.release(context.Background(), opRelease, l.key, l.value)
			return 0, fmt.Errorf("%w: %s: master %s: %w", ErrNotAcquired, what, nr.Node, nr.Err)
		}
	}
	return next, nil
}

// raised reads a raise script's reply v for the number next: replyStale (the
// counter is already at or above next) is an error matching errFenceStale.
func raised(v, next int64) (Outcome, error) {
	if v == replyStale {
		return OutcomeError, fmt.Errorf("%w (%d)", errFenceStale, next)
	}
	return outcomeOf(v), nil
}

// fenceRound checks one fencing round: a quorum of votes from masters out of
// quarantine, inside the lock's validity. On failure it releases the lock.
func (m *Manager) fenceRound(l *Lock, rep *Report) error {
	now := m.cfg.clock.Now()
	m.unquarantinedVotes(rep, now)
	rep.Elapsed = now.Sub(l.start)
	rep.Validity = l.until.Sub(now)
	if rep.Votes >= m.quorum && rep.Validity > 0 {
		return nil
	}
	m.release(context.Background(), opRelease, l.key, l.value)
	re := m.roundError(rep)
	if rep.Votes >= m.quorum {
		re.Kind = ErrTooSlow
	} else if re.Kind != ErrUnavailable {
		re.Kind = ErrHeld
	}
	return fmt.Errorf("%w: fencing: %w", ErrNotAcquired, re)
}
