package quorum

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redlock/redlock/internal/keyspace"
	"github.com/redlock/redlock/internal/wire"
)

// Token operations: what a holder, or an administrator who knows the token, does
// with a lock by name rather than through a *Lock.

// release runs compare-and-delete of value on every master and wakes the name's
// waiters where it deleted the key: only the head of its fair queue when there is
// one, and every waiter that is not queued (release.lua); where nobody waits (no
// queue key, so no waiter's marker: waitmark.go), it publishes nothing.
func (m *Manager) release(ctx context.Context, op, key, value string) *Report {
	return m.releaseRoundTo(ctx, m.newReport(op, key), value)
}

// releaseQuiet is release waking nobody, on the masters only names: the clean-up
// of a failed round frees no lock that anyone could take, and waking the other
// waiters from it would let failed rounds wake each other in a loop.
func (m *Manager) releaseQuiet(ctx context.Context, key, value string, only []bool) {
	// No channel (""): release.lua wakes nobody.
	m.scriptEach(ctx, opRelease, key, releaseW, ":", only, []string{key}, func(_ int, r *wire.Result) (Outcome, error) {
		o, _, err := decodeInt(r)
		return o, err
	}, value, "")
}

// forceExpireToken deletes token at key on every master, whatever kind of hold
// it is there (an administrator's force-expire is not a handoff: it wakes every
// waiter, and announces ForceExpiredMessage so that an event stream tells it from
// a release): a string key only where it holds token (force_expire.lua), a
// shared key's member token and its tombstone (a revoked holder's) only, the
// other shared holders kept. Where it removed token it publishes ForceExpiredMessage on the name's
// wake-up channel, so waiters and the holder's loss watch hear of it.
func (m *Manager) forceExpireToken(ctx context.Context, key, token string) *Report {
	channel := wakeChannel(key)
	return m.fanout(ctx, opForceExpire, key, func(ctx context.Context, n *node) (Outcome, error) {
		r, err := m.evalOn(ctx, n, forceExpireW, []string{key}, token, channel, "string")
		if err != nil || r != -1 {
			return forceOutcome(r, err)
		}
		// Not a string holding token: a shared key's member, maybe, or a
		// revoked one's tombstone, which goes with it (shared_release.lua): its
		// removal is a deletion too (an error here: not a sorted set).
		score, err := m.doOn(ctx, n, "$", "ZSCORE", key, keyspace.Tombstone(token))
		tomb := err == nil && score.Int >= 0
		if r, err = m.evalOn(ctx, n, sharedReleaseScript, []string{key}, token, channel); err != nil || r == -1 || r == 0 && !tomb {
			return forceOutcome(r, err)
		}
		// Removed: a lost announcement costs the holder's watch nothing (its
		// tracking hears the member go) and the waiters a retry delay.
		_, _ = m.doOn(ctx, n, ":", "PUBLISH", channel, keyspace.ForceExpiredMessage)
		return OutcomeOK, nil
	})
}

// forceOutcome is the outcome of a force-expire script's reply: 1 removed, 0
// missing, -1 kept (another value, or another kind of key).
func forceOutcome(r int64, err error) (Outcome, error) {
	if err != nil {
		return OutcomeError, err
	}
	return outcomeOf(r), nil
}

// releaseToken is admin.Admin.ReleaseToken, which documents it.
func (m *Manager) releaseToken(ctx context.Context, name, token string) (*Report, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	rep := m.releaseAnnounced(ctx, m.Key(name), token)
	return rep, releaseError(rep, time.Time{})
}

// releaseAnnounced is release for a release by token (admin.Admin.ReleaseToken,
// ReleaseHeld), which may be an administrator's: it publishes where it deleted
// even where no waiter marked the queue key, so that the holder's loss watch
// hears of it.
func (m *Manager) releaseAnnounced(ctx context.Context, key, token string) *Report {
	return m.scriptOnAll(ctx, opRelease, key, releaseW, []string{key, key + queueSuffix}, nil, token, wakeChannel(key), "all")
}

// forceExpire is admin.Admin.ForceExpire, which documents it.
func (m *Manager) forceExpire(ctx context.Context, name, token string) (*Report, error) {
	if err := keyspace.ValidateKeyName(name); err != nil {
		return nil, err
	}
	key := m.Key(name)
	if token != "" {
		rep := m.forceExpireToken(ctx, key, token)
		return rep, releaseError(rep, time.Time{})
	}
	channel := wakeChannel(key)
	rep := m.fanout(ctx, opForceExpire, key, func(ctx context.Context, n *node) (Outcome, error) {
		deleted, err := m.evalOn(ctx, n, deleteAnnounceW, []string{key}, channel, keyspace.ForceExpiredMessage)
		switch {
		case err != nil:
			return OutcomeError, err
		case deleted == 0:
			return OutcomeMissing, nil
		}
		return OutcomeOK, nil
	})
	return rep, releaseError(rep, time.Time{})
}

// forceExpireSeen is admin.Admin.ForceExpireSeen, which documents it.
func (m *Manager) forceExpireSeen(ctx context.Context, name string, seen map[string]keyspace.Seen) (*Report, error) {
	if err := keyspace.ValidateKeyName(name); err != nil {
		return nil, err
	}
	key := m.Key(name)
	return m.forceExpireSeenKey(ctx, key, wakeChannel(key), seen)
}

// extendToken is admin.Admin.ExtendToken, which documents it.
func (m *Manager) extendToken(ctx context.Context, name, token string, ttl time.Duration) (time.Time, *Report, error) {
	if err := checkName(name); err != nil {
		return time.Time{}, nil, err
	}
	if err := m.checkTTL(ttl); err != nil {
		return time.Time{}, nil, err
	}
	return m.extend(ctx, m.Key(name), token, ttl)
}

func (m *Manager) extend(ctx context.Context, key, value string, ttl time.Duration) (time.Time, *Report, error) {
	start := m.cfg.clock.Now()
	rep := m.extendRound(ctx, opExtend, key, value, ttl.Milliseconds())
	if until, ok := m.score(rep, start, ttl); ok {
		return until, rep, nil
	}
	return time.Time{}, rep, revokedOr(rep, m.roundError(rep))
}

// revokedOr returns err, marked ErrRevoked when it is a loss and some master of
// rep holds the lock's tombstone (extend.lua read it there).
func revokedOr(rep *Report, err *RoundError) error {
	if !errors.Is(err, ErrLost) {
		return err
	}
	for _, n := range rep.Nodes {
		if n.Outcome == OutcomeForeign && n.holder == tombstonePrefix {
			return fmt.Errorf("%w: %w", ErrRevoked, err)
		}
	}
	return err
}
