package quorum

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"sync"

	"github.com/redis/go-redis/v9"
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

// WithFencing gives the acquisition a fencing token (Lock.Fence): a number strictly
// greater than that of every earlier holder of the same name, as long as a majority
// of masters keeps its data (which needs appendfsync always, or no master losing
// data). The counter lives on every master under the lock key plus ":fence", without
// a TTL: one key per lock name, never one per acquisition. Acquiring with fencing
// costs two more rounds (read the counter from a majority that holds our lock, then
// raise it to max+1 on a majority, comparing our lock value inside the script); when
// either round misses a quorum or the validity runs out, the acquisition fails and
// its keys are released.
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
		v, err := fenceReadScript.Run(ctx, n.client, []string{l.key, fkey}, l.value).Int64()
		switch {
		case err != nil:
			return OutcomeError, err
		case v < 0:
			return OutcomeForeign, nil
		}
		mu.Lock()
		highest = max(highest, v)
		mu.Unlock()
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
