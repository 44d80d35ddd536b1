package quorum

import (
	"context"
	_ "embed"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redlock/redlock/internal/keyspace"
	"github.com/redlock/redlock/internal/wire"
)

// Revocation with a lock-delay: what force-expire does by default. Each value
// revoked becomes its tombstone (tombstone.go) for the key's remaining TTL plus
// its drift budget, so that nobody takes the name while the revoked holder may
// still believe it holds it; the holder's loss watch hears "revoked" on the
// name's wake-up channel and its Verify reports ErrRevoked, and its release
// deletes the tombstone (the name is free at once).

var (
	//go:embed scripts/revoke.lua
	revokeLua string
	//go:embed scripts/revoke_shared.lua
	revokeSharedLua string

	revokeW       = wire.NewScript(revokeLua)
	revokeSharedW = wire.NewScript(revokeSharedLua)
)

// Revoke's replies other than a tombstone's TTL (revoke.lua).
const (
	revokeDeleted   = -2 // the key had no TTL: deleted
	revokeTombstone = -3 // already a tombstone: kept; -3 - r is its TTL in ms
)

// revokeSeen is admin.Admin.RevokeSeen, which documents it.
func (m *Manager) revokeSeen(ctx context.Context, name string, seen map[string]keyspace.Seen) (time.Time, *Report, error) {
	if err := keyspace.ValidateKeyName(name); err != nil {
		return time.Time{}, nil, err
	}
	key := m.Key(name)
	return m.revokeSeenKey(ctx, key, wakeChannel(key), "", seen)
}

// revokeToken is admin.Admin.RevokeToken, which documents it.
// A string key is revoked where it holds token; a shared key's member token
// where the key is a shared one (revoke_shared.lua: the other holders are kept).
func (m *Manager) revokeToken(ctx context.Context, name, token string) (time.Time, *Report, error) {
	if err := keyspace.ValidateKeyName(name); err != nil {
		return time.Time{}, nil, err
	}
	key := m.Key(name)
	channel := wakeChannel(key)
	factor, extra := m.driftArgs()
	return m.revokeRound(ctx, key, func(ctx context.Context, n *node) (int64, error) {
		r, err := m.evalOn(ctx, n, revokeW, []string{key}, token, channel, "string", factor, extra, "")
		if err != nil || r != -1 {
			return r, err
		}
		// Not a string holding token: a shared key's member, maybe (-1 again
		// when the key is not a shared one: kept).
		return m.evalOn(ctx, n, revokeSharedW, []string{key}, token, channel, factor, extra)
	})
}

// revokeListed is admin.Admin.RevokeListed, which documents it.
func (m *Manager) revokeListed(ctx context.Context, listed string, seen map[string]keyspace.Seen) (time.Time, *Report, error) {
	channel, err := m.listedChannel(listed, seen)
	if err != nil {
		return time.Time{}, nil, err
	}
	for _, sn := range seen {
		if sn.Type == "zset" {
			return time.Time{}, nil, fmt.Errorf("%w: %s holds shared holders: revoke them one by one (RevokeShared; redlock force-expire %s), or delete the key now", ErrInvalidArgument, listed, listed)
		}
	}
	key, also := m.Key(listed), ""
	if channel != wakeChannel(key) {
		// A permit slot: its holder's loss watch may listen on the slot's own
		// channel, its waiters listen on the semaphore's.
		also = wakeChannel(key)
	}
	return m.revokeSeenKey(ctx, key, channel, also, seen)
}

// revokeShared is admin.Admin.RevokeShared, which documents it.
func (m *Manager) revokeShared(ctx context.Context, name, value string) (time.Time, *Report, error) {
	if err := checkName(name); err != nil {
		return time.Time{}, nil, err
	}
	key := m.Key(name)
	channel := wakeChannel(key)
	factor, extra := m.driftArgs()
	return m.revokeRound(ctx, key, func(ctx context.Context, n *node) (int64, error) {
		return m.evalOn(ctx, n, revokeSharedW, []string{key}, value, channel, factor, extra)
	})
}

// revokeSeenKey revokes key on each master where it still holds what was seen
// there, publishing on channel, and on also unless it is "".
func (m *Manager) revokeSeenKey(ctx context.Context, key, channel, also string, seen map[string]keyspace.Seen) (time.Time, *Report, error) {
	factor, extra := m.driftArgs()
	return m.revokeRound(ctx, key, func(ctx context.Context, n *node) (int64, error) {
		sn := seen[n.name]
		if sn.Type == "" {
			return 0, nil
		}
		return m.evalOn(ctx, n, revokeW, []string{key}, sn.Value, channel, sn.Type, factor, extra, also)
	})
}

// revokeRound runs one revocation script per master and scores its replies: a
// tombstone's TTL in ms (> 0), revokeDeleted, 0 missing, -1 changed,
// revokeTombstone minus the TTL of a tombstone already there.
func (m *Manager) revokeRound(ctx context.Context, key string, run func(ctx context.Context, n *node) (int64, error)) (time.Time, *Report, error) {
	delays := make([]int64, len(m.nodes))
	rep := m.fanout(ctx, opForceExpire, key, func(ctx context.Context, n *node) (Outcome, error) {
		r, err := run(ctx, n)
		switch {
		case err != nil:
			return OutcomeError, err
		case r > 0:
			delays[m.nodeIndex(n)] = r
			return OutcomeOK, nil
		case r == revokeDeleted:
			return OutcomeOK, nil
		case r <= revokeTombstone:
			// Revoked already: nothing to revoke, the name taken as long.
			delays[m.nodeIndex(n)] = revokeTombstone - r
			return OutcomeMissing, nil
		case r == 0:
			return OutcomeMissing, nil
		}
		return OutcomeForeign, nil
	})
	var free time.Time
	if longest := slices.Max(delays); longest > 0 {
		// The tombstone's TTL started at the master before its reply came.
		free = m.cfg.clock.Now().Add(time.Duration(longest) * time.Millisecond)
	}
	return free, rep, releaseError(rep, time.Time{})
}

// driftArgs returns the drift budget's factor and fixed part (whole ms, rounded
// up) as the revocation scripts take them.
func (m *Manager) driftArgs() (factor, extra string) {
	ms := (m.cfg.driftExtra + time.Millisecond - 1) / time.Millisecond
	return strconv.FormatFloat(m.cfg.driftFactor, 'f', -1, 64), strconv.FormatInt(int64(ms), 10)
}

// deleteSharedTombstone is admin.Admin.DeleteSharedTombstone, which documents it.
func (m *Manager) deleteSharedTombstone(ctx context.Context, name, tombstone string) (*Report, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if !keyspace.IsTombstone(tombstone) {
		return nil, fmt.Errorf("%w: not a tombstone", ErrInvalidArgument)
	}
	key := m.Key(name)
	rep := m.scriptOnAll(ctx, opForceExpire, key, sharedReleaseScript, []string{key}, nil, tombstone, wakeChannel(key))
	return rep, releaseError(rep, time.Time{})
}
