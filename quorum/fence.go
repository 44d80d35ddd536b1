package quorum

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/redlock/redlock/internal/wire"
)

// fenceSuffix names the fence counter key beside a lock key.
const fenceSuffix = ":fence"

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

	fenceReadScript  = redis.NewScript(fenceReadLua)
	fenceRaiseScript = redis.NewScript(fenceRaiseLua)
)

// ErrFenceStale: a master's fence counter was already at or above the fence an
// acquisition tried to set (a newer holder, or a read that missed a master).
var ErrFenceStale = errors.New("fence counter already at or above the new fence")

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

// FenceKey returns the key of the fence counter of a lock name.
func (m *Manager) FenceKey(name string) string { return m.Key(name) + fenceSuffix }

// raiseFence sets l.fence, or releases l and returns an error matching
// ErrNotAcquired (and a *RoundError naming the masters).
func (m *Manager) raiseFence(ctx context.Context, l *Lock) error {
	fkey := l.key + fenceSuffix
	var mu sync.Mutex
	var highest int64
	rep := m.fanout(ctx, opFenceRead, l.key, func(ctx context.Context, n *node) (Outcome, error) {
		r, err := fenceReadScript.Run(ctx, n.client, []string{l.key, fkey}, l.value).Int64Slice()
		switch {
		case err != nil:
			return OutcomeError, err
		case len(r) != 2:
			return OutcomeError, fmt.Errorf("%w: fence read gave %d values", wire.ErrProtocol, len(r))
		}
		mu.Lock()
		highest = max(highest, r[1])
		mu.Unlock()
		if r[0] != 1 {
			return OutcomeForeign, nil
		}
		return OutcomeOK, nil
	})
	if err := m.fenceRound(l, rep); err != nil {
		return err
	}
	next := highest + 1
	rep = m.fanout(ctx, opFenceRaise, l.key, func(ctx context.Context, n *node) (Outcome, error) {
		v, err := fenceRaiseScript.Run(ctx, n.client, []string{l.key, fkey}, l.value, next).Int64()
		switch {
		case err != nil:
			return OutcomeError, err
		case v == replyStale:
			return OutcomeError, fmt.Errorf("%w (%d)", ErrFenceStale, next)
		}
		return outcomeOf(v), nil
	})
	if err := m.fenceRound(l, rep); err != nil {
		return err
	}
	// A master that did not answer the read but holds a counter at or above next
	// means next may repeat an earlier fence: give the lock up rather than hand out
	// a number that does not fence.
	for _, nr := range rep.Nodes {
		if errors.Is(nr.Err, ErrFenceStale) {
			m.release(context.Background(), opRelease, l.key, l.value)
			return fmt.Errorf("%w: fencing: master %s: %w", ErrNotAcquired, nr.Node, nr.Err)
		}
	}
	l.fence = next
	return nil
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
