package quorum

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Holds resumed from their token: what the extend and release commands do for
// a process that kept only the token of an acquisition (a script between
// `redlock acquire` and `redlock release`). The token's owner part says which
// primitive wrote it (Owner.Kind), so the caller gives only the names.

// ExtendHeld extends what token holds of names to ttl on every master where it is
// still held, as ExtendToken does for a plain lock, whatever primitive took it:
// every name of a multi-name hold (names must be exactly its names, in any
// order), the permit of semaphore names[0] that token holds, or a shared hold of
// names[0]. It never recreates what expired. It succeeds when a quorum extended
// and validity is left, returning the new deadline; otherwise the error matches
// ErrLost (a majority no longer holds token) or ErrUnavailable. A leadership's
// token is refused (ErrInvalidOption): a leadership lives as long as its
// candidate process does.
func (m *Manager) ExtendHeld(ctx context.Context, names []string, token string, ttl time.Duration) (time.Time, *Report, error) {
	if err := m.checkTTL(ttl); err != nil {
		return time.Time{}, nil, err
	}
	holds, err := m.heldLocks(names, token)
	if err != nil {
		return time.Time{}, nil, err
	}
	var firstErr error
	var firstRep *Report
	for _, l := range holds { // a permit: the slot that holds token, whichever it is
		until, rep, err := l.extendRound(ctx, ttl)
		if err == nil {
			return until, rep, nil
		}
		if firstErr == nil {
			firstErr, firstRep = err, rep
		}
	}
	return time.Time{}, firstRep, firstErr
}

// ReleaseHeld releases what token holds of names on every master, as
// ReleaseToken does for a plain lock, whatever primitive took it (see
// ExtendHeld): compare-and-delete, so another holder's key, permit or share is
// never touched; missing is not an error. For a permit every slot is released
// where it holds token (a minority leftover included) and the report is that of
// the slot held on the most masters.
func (m *Manager) ReleaseHeld(ctx context.Context, names []string, token string) (*Report, error) {
	holds, err := m.heldLocks(names, token)
	if err != nil {
		return nil, err
	}
	var best *Report
	for _, l := range holds {
		var rep *Report
		if l.prim == nil {
			rep = m.releaseAnnounced(ctx, l.key, l.value)
		} else {
			rep = l.releaseRound(ctx)
		}
		if best == nil || rep.count(OutcomeOK) > best.count(OutcomeOK) {
			best = rep
		}
	}
	return best, releaseError(best, time.Time{})
}

// HeldKind returns the primitive that wrote token ("" for a plain lock or a
// value of another library; "sem", "multi", "shared", "leader") and its count
// (a semaphore's permits, a multi-name hold's number of names).
func HeldKind(token string) (kind string, count int) {
	v, err := ParseValue(token)
	if err != nil {
		return "", 0
	}
	return v.Owner.Kind, v.Owner.Count
}

// heldLocks returns the Locks that token may hold of names: one, or one per
// slot of a semaphore.
func (m *Manager) heldLocks(names []string, token string) ([]*Lock, error) {
	if len(names) == 0 {
		return nil, fmt.Errorf("%w: no name", ErrInvalidOption)
	}
	for _, n := range names {
		if err := checkName(n); err != nil {
			return nil, err
		}
	}
	kind, count := HeldKind(token)
	if kind != "multi" && len(names) > 1 {
		return nil, fmt.Errorf("%w: the token holds one name, %d given", ErrInvalidOption, len(names))
	}
	name := names[0]
	lock := func(key string, p primitive) *Lock {
		return &Lock{m: m, name: name, key: key, value: token, prim: p}
	}
	switch kind {
	case "multi":
		sorted := slices.Clone(names)
		slices.Sort(sorted)
		if len(slices.Compact(slices.Clone(sorted))) != len(sorted) {
			return nil, fmt.Errorf("%w: a name given twice", ErrInvalidOption)
		}
		if count > 0 && len(sorted) != count {
			return nil, fmt.Errorf("%w: the token holds %d names, %d given: give every name it was taken with", ErrInvalidOption, count, len(sorted))
		}
		keys := make([]string, len(sorted))
		for i, n := range sorted {
			keys[i] = m.Key(n)
		}
		l := lock(keys[0], &multiLock{names: sorted, keys: keys})
		l.name = strings.Join(sorted, " ")
		return []*Lock{l}, nil
	case "sem":
		if err := checkPermits(count); err != nil {
			return nil, err
		}
		base := m.Key(name) + permitBase
		out := make([]*Lock, count)
		for i := range count {
			out[i] = lock(base+":"+strconv.Itoa(i), &permitLock{n: count, slot: i, base: base})
		}
		return out, nil
	case "shared":
		return []*Lock{lock(m.Key(name), sharedLock{})}, nil
	case "leader":
		return nil, fmt.Errorf("%w: a leadership's token: it ends with its candidate process (elect), or with its TTL", ErrInvalidOption)
	}
	return []*Lock{lock(m.Key(name), nil)}, nil
}

// ForceExpireListed is ForceExpireSeen for any name a listing shows, the keys of
// the primitives included: a permit slot (NAME:permit:I) and a leadership
// (NAME:leader) are deleted on each master only where they still hold the value
// seen there, and the wake-up goes to the primitive's channel (the semaphore's
// waiters, the election's candidates and observers). A shared key (a sorted set)
// is deleted where it is still one, its members not compared: to remove one shared
// holder, ReleaseHeld its value. A leader's record and an exclusive waiter's
// marker are refused (ErrInvalidOption): they go with their primitive.
func (m *Manager) ForceExpireListed(ctx context.Context, listed string, seen map[string]Seen) (*Report, error) {
	channel, err := m.listedChannel(listed, seen)
	if err != nil {
		return nil, err
	}
	return m.forceExpireSeenKey(ctx, m.Key(listed), channel, seen)
}

// listedChannel returns the wake-up channel of a key a listing shows, as
// ForceExpireListed publishes on it: the primitive's for a permit slot or a
// leadership, the key's own else. The keys that go with their primitive are
// refused (ErrInvalidOption).
func (m *Manager) listedChannel(listed string, seen map[string]Seen) (string, error) {
	typ := ""
	for _, sn := range seen {
		if sn.Type != "" {
			typ = sn.Type
			break
		}
	}
	kc := ClassifyKey(listed, typ)
	switch kc.Kind {
	case KeyPermit:
		if err := checkName(kc.Name); err != nil {
			return "", err
		}
		return wakeChannel(m.Key(kc.Name) + permitBase), nil
	case KeyLeader:
		if err := checkName(kc.Name); err != nil {
			return "", err
		}
	case KeyTerm, KeyFence, KeyQueue, KeyWriterWaiting:
		return "", fmt.Errorf("%w: %s is a %s key of %s: force-expire %s itself", ErrInvalidOption, listed, kc.Kind, kc.Name, kc.Name)
	default:
		if err := ValidateKeyName(listed); err != nil {
			return "", err
		}
	}
	return wakeChannel(m.Key(listed)), nil
}

// forceExpireSeenKey deletes key on each master where it still holds what was
// seen there (ForceExpireSeen), publishing on channel where it deleted.
func (m *Manager) forceExpireSeenKey(ctx context.Context, key, channel string, seen map[string]Seen) (*Report, error) {
	rep := m.fanout(ctx, opForceExpire, key, func(ctx context.Context, n *node) (Outcome, error) {
		sn := seen[n.name]
		if sn.Type == "" {
			return OutcomeMissing, nil
		}
		r, err := forceExpireScript.Run(ctx, n.client, []string{key}, sn.Value, channel, sn.Type).Int64()
		if err != nil {
			return OutcomeError, err
		}
		return outcomeOf(r), nil
	})
	return rep, releaseError(rep, time.Time{})
}
