package quorum

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redlock/redlock/internal/keyspace"
)

// Holds resumed from their token: what the extend and release commands do for
// a process that kept only the token of an acquisition (a script between
// `redlock acquire` and `redlock release`). The token's owner part says which
// primitive wrote it (Owner.Kind), so the caller gives only the names.

// extendHeld is admin.Admin.ExtendHeld, which documents it.
func (m *Manager) extendHeld(ctx context.Context, names []string, token string, ttl time.Duration) (time.Time, *Report, error) {
	if err := m.checkTTL(ttl); err != nil {
		return time.Time{}, nil, err
	}
	l, err := m.heldLock(names, token)
	if err != nil {
		return time.Time{}, nil, err
	}
	if p, ok := l.prim.(*permitLock); ok {
		if rep := m.findPermit(ctx, l, p); p.slot < 0 {
			return time.Time{}, rep, m.roundError(rep)
		}
	}
	return l.extendRound(ctx, ttl)
}

// releaseHeld is admin.Admin.ReleaseHeld, which documents it.
func (m *Manager) releaseHeld(ctx context.Context, names []string, token string) (*Report, error) {
	l, err := m.heldLock(names, token)
	if err != nil {
		return nil, err
	}
	var rep *Report
	switch p := l.prim.(type) {
	case nil:
		rep = m.releaseAnnounced(ctx, l.key, l.value)
	case *permitLock:
		rep = m.releasePermitToken(ctx, l, p)
	default:
		rep = l.releaseRound(ctx)
		if _, ok := p.(sharedLock); ok {
			// A shared release wakes nobody while other holders remain: tell
			// this holder's loss watch.
			m.announceLoss(ctx, rep, l.key, l.key)
		}
	}
	return rep, releaseError(rep, time.Time{})
}

// heldKind returns the primitive that wrote token, as keyspace.Primitive names
// it (keyspace.PrimLock for a plain lock; "" when token is not a value of this
// package), and its count (a semaphore's permits, a multi-name hold's number of
// names).
func heldKind(token string) (kind string, count int) {
	v, err := parseValue(token)
	if err != nil {
		return "", 0
	}
	return keyspace.Primitive(v.Owner.Kind), v.Owner.Count
}

// heldLock returns the Lock that token may hold of names; for a semaphore, its
// permit in no slot yet (findPermit finds it).
func (m *Manager) heldLock(names []string, token string) (*Lock, error) {
	if len(names) == 0 {
		return nil, fmt.Errorf("%w: no name", ErrInvalidArgument)
	}
	for _, n := range names {
		if err := checkName(n); err != nil {
			return nil, err
		}
	}
	kind, count := heldKind(token)
	if kind != keyspace.PrimMulti && len(names) > 1 {
		return nil, fmt.Errorf("%w: the token holds one name, %d given", ErrInvalidArgument, len(names))
	}
	name := names[0]
	lock := func(key string, p primitive) *Lock {
		return &Lock{m: m, name: name, key: key, value: token, prim: p}
	}
	switch kind {
	case keyspace.PrimMulti:
		sorted := slices.Clone(names)
		slices.Sort(sorted)
		if len(slices.Compact(slices.Clone(sorted))) != len(sorted) {
			return nil, fmt.Errorf("%w: a name given twice", ErrInvalidArgument)
		}
		if count > 0 && len(sorted) != count {
			return nil, fmt.Errorf("%w: the token holds %d names, %d given: give every name it was taken with", ErrInvalidArgument, count, len(sorted))
		}
		keys := make([]string, len(sorted))
		for i, n := range sorted {
			keys[i] = m.Key(n)
		}
		l := lock(keys[0], &multiLock{names: sorted, keys: keys})
		l.name = strings.Join(sorted, " ")
		return l, nil
	case keyspace.PrimSemaphore:
		if err := checkPermits(count); err != nil {
			return nil, err
		}
		base := m.Key(name) + permitBase
		return lock(base, &permitLock{n: count, slot: -1, base: base}), nil
	case keyspace.PrimShared:
		return lock(m.Key(name), sharedLock{}), nil
	case keyspace.PrimLeader:
		return nil, fmt.Errorf("%w: a leadership's token: it ends with its candidate process (elect), or with its TTL", ErrInvalidArgument)
	}
	return lock(m.Key(name), nil), nil
}

// forceExpireListed is admin.Admin.ForceExpireListed, which documents it.
func (m *Manager) forceExpireListed(ctx context.Context, listed string, seen map[string]keyspace.Seen) (*Report, error) {
	channel, err := m.listedChannel(listed, seen)
	if err != nil {
		return nil, err
	}
	return m.forceExpireSeenKey(ctx, m.Key(listed), channel, seen)
}

// listedChannel returns the wake-up channel of a key a listing shows, as
// ForceExpireListed publishes on it: the primitive's for a permit slot or a
// leadership, the key's own else. The keys that go with their primitive are
// refused (ErrInvalidArgument).
func (m *Manager) listedChannel(listed string, seen map[string]keyspace.Seen) (string, error) {
	typ := ""
	for _, sn := range seen {
		if sn.Type != "" {
			typ = sn.Type
			break
		}
	}
	kc := keyspace.ClassifyKey(listed, typ)
	switch kc.Kind {
	case keyspace.KeyPermit:
		if err := checkName(kc.Name); err != nil {
			return "", err
		}
		return wakeChannel(m.Key(kc.Name) + permitBase), nil
	case keyspace.KeyLeader:
		if err := checkName(kc.Name); err != nil {
			return "", err
		}
	case keyspace.KeyTerm, keyspace.KeyFence, keyspace.KeyQueue, keyspace.KeyWriterWaiting:
		return "", fmt.Errorf("%w: %s is a %s key of %s: force-expire %s itself", ErrInvalidArgument, listed, kc.Kind, kc.Name, kc.Name)
	default:
		if err := keyspace.ValidateKeyName(listed); err != nil {
			return "", err
		}
	}
	return wakeChannel(m.Key(listed)), nil
}

// forceExpireSeenKey deletes key on each master where it still holds what was
// seen there (ForceExpireSeen), publishing on channel where it deleted.
func (m *Manager) forceExpireSeenKey(ctx context.Context, key, channel string, seen map[string]keyspace.Seen) (*Report, error) {
	rep := m.fanout(ctx, opForceExpire, key, func(ctx context.Context, n *node) (Outcome, error) {
		sn := seen[n.name]
		if sn.Type == "" {
			return OutcomeMissing, nil
		}
		r, err := m.evalOn(ctx, n, forceExpireW, []string{key}, sn.Value, channel, sn.Type)
		if err != nil {
			return OutcomeError, err
		}
		return outcomeOf(r), nil
	})
	return rep, releaseError(rep, time.Time{})
}
