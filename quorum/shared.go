package quorum

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Shared holds: any number of shared holders of a name, or one exclusive holder.
//
// Shared holders live AT the lock key, as a sorted set: one member per holder (its
// value), scored by its expiry in server milliseconds; the key's TTL is the latest
// expiry. A plain lock (this package's Acquire, or any peer's SET NX on the key)
// is the exclusive holder: its SET NX fails while the sorted set exists, and a
// shared grant (shared_acquire.lua) fails while the key holds a string. Each grant
// needs a majority of masters, and two majorities share a master whose atomic
// script refused one of them.
//
// An exclusive waiter is not starved by a stream of shared holders: when a round
// of a blocking exclusive Acquire (plain or WithFair) meets shared holders, it sets
// NAME:xwait on every master (a marker with a short TTL, refreshed by each of its rounds), and
// no new shared grant is made on a master while the marker lives. The marker is
// deleted when the waiter acquires or gives up; a waiter that dies leaves it for at
// most its TTL (the fair queue's heartbeat TTL).

// Shared is the shared side of one name on a Manager: any number of shared
// holders at once, or one exclusive holder, never both, under Redlock's
// assumptions. The exclusive holder is the plain mutex of the same name
// (Manager.Acquire and TryAcquire, or any Redlock client's SET NX on the key):
// there is no second way to take it. A blocking exclusive Acquire of the name
// keeps new shared holders out while it waits, so it is not starved by a stream of
// them. Shared holds no state of its own besides its name, and is safe for
// concurrent use.
//
// It does not guarantee fairness among shared holders, nor that a shared hold
// outlives its Until (watch the Lock's Done). The zero value is not usable: get a
// Shared from Manager.Shared.
type Shared struct {
	m    *Manager
	name string
}

// Shared returns the shared side of name on m. The name follows ValidateName. It
// does no I/O.
func (m *Manager) Shared(name string) (*Shared, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	return &Shared{m: m, name: name}, nil
}

// Acquire takes a shared hold of the name, retrying as Manager.Acquire does (the
// last shared holder's release, or the exclusive holder's, wakes it; WithWait
// bounds the wait). The Lock is this holder's share: Until, Done, Extend, Release,
// Verify and the keep-alive apply to it alone; it has no fence (Fence is 0). It
// takes neither WithFair nor WithFencing (ErrInvalidArgument). A cancelled ctx gives
// an error matching both ErrNotAcquired and ctx.Err(); nothing is left set on any
// master.
func (s *Shared) Acquire(ctx context.Context, ttl time.Duration, opts ...LockOption) (*Lock, error) {
	return s.m.acquire(ctx, s.name, ttl, s.m.cfg.attempts, primSpec{shared: true}, opts)
}

// TryAcquire is Acquire with one round: an error matching ErrHeld while the
// exclusive holder (or an exclusive waiter) keeps the name.
func (s *Shared) TryAcquire(ctx context.Context, ttl time.Duration, opts ...LockOption) (*Lock, error) {
	return s.m.acquire(ctx, s.name, ttl, 1, primSpec{shared: true}, opts)
}

// sharedLock is the primitive of a shared hold.
type sharedLock struct{}

func (sharedLock) extend(ctx context.Context, l *Lock, ttl time.Duration) (time.Time, *Report, error) {
	start := l.m.cfg.clock.Now()
	rep := l.m.scriptOnAll(ctx, opExtend, l.key, sharedExtendScript, []string{l.key}, nil, l.value, msArg(ttl))
	return l.m.scoredExtend(rep, start, ttl)
}

// release removes this holder; the last one out deletes the key and wakes the
// waiters (an exclusive one among them).
func (sharedLock) release(ctx context.Context, l *Lock) *Report {
	return l.m.scriptOnAll(ctx, opRelease, l.key, sharedReleaseScript, []string{l.key}, nil, l.value, wakeChannel(l.key))
}

// sharedAcquirer takes a shared hold.
type sharedAcquirer struct {
	m    *Manager
	name string
	key  string
	keys []string // the key and its writer-waiting marker: shared_acquire.lua's keys
}

func (m *Manager) newSharedAcquirer(name string, lc *lockConfig) (acquirer, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if lc.fair || lc.fencing {
		return nil, fmt.Errorf("%w: a shared hold takes neither WithFair nor WithFencing", ErrInvalidArgument)
	}
	return newSharedAcquirer(m, name, m.Key(name)), nil
}

func newSharedAcquirer(m *Manager, name, key string) *sharedAcquirer {
	return &sharedAcquirer{m: m, name: name, key: key, keys: []string{key, key + xwaitSuffix}}
}

func (a *sharedAcquirer) waitKey() string { return a.key }

func (a *sharedAcquirer) describe(o *Owner) { o.Kind = ownerShared }

func (a *sharedAcquirer) won(context.Context, *Lock) error { return nil }

// round runs shared_acquire.lua on every master.
func (a *sharedAcquirer) round(ctx context.Context, start time.Time, value string, ttl time.Duration, _ *fairWaiter) (*Lock, error) {
	m := a.m
	rep := m.scriptOnAll(ctx, opAcquire, a.key, sharedAcquireScript, a.keys, granted, value, msArg(ttl))
	if until, ok := m.score(rep, start, ttl); ok {
		return &Lock{m: m, name: a.name, key: a.key, value: value, ttl: ttl, votes: *rep, start: start,
			until: until, untilFrom: start, keysUntil: m.keysUntil(start, ttl), prim: sharedLock{}}, nil
	}
	m.scriptOnAll(backgroundFor(ctx), opRelease, a.key, sharedReleaseScript, a.keys[:1], nil, value, "")
	return nil, m.roundError(rep)
}

// xwaiter is a blocking exclusive acquisition's marker against shared holders.
type xwaiter struct {
	key    string // the lock key
	value  string // the marker's value, this waiter's own
	marked bool   // a master set the marker, or may have (it did not answer)
}

// markExclusive sets the writer-waiting marker of key on the masters where a
// failed round (last) may have met shared holders: where the key was held and
// its holder unknown (SET NX GET cannot read a sorted set). It returns the
// waiter's marker state (x, created on first use).
func (m *Manager) markExclusive(ctx context.Context, x *xwaiter, key string, last error) *xwaiter {
	var re *RoundError
	if !errors.As(last, &re) || !errors.Is(re.Kind, ErrHeld) {
		return x
	}
	unknown := false
	for _, nr := range re.Nodes {
		if nr.Outcome == OutcomeForeign && nr.holder == "" {
			unknown = true
		}
	}
	if !unknown {
		return x
	}
	if x == nil {
		v, err := newValue(Owner{Kind: "xwait"})
		if err != nil {
			return x
		}
		x = &xwaiter{key: key, value: v}
	}
	rep := m.scriptOnAll(ctx, "mark", key+xwaitSuffix, xwaitMarkScript, []string{key, key + xwaitSuffix}, nil, x.value, msArg(m.heartbeatTTL()))
	// A master that did not answer (a cancellation of ctx ends the round at
	// once) may have set the marker all the same: clear cleans up after it too.
	if rep.count(OutcomeOK)+rep.count(OutcomeError) > 0 {
		x.marked = true
	}
	return x
}

// clear deletes the marker where it is still this waiter's and wakes the shared
// waiters it kept out.
func (x *xwaiter) clear(ctx context.Context, m *Manager) {
	if x == nil || !x.marked {
		return
	}
	m.scriptOnAll(ctx, opRelease, x.key+xwaitSuffix, multiReleaseScript, []string{x.key + xwaitSuffix}, released, x.value, "1", wakeChannel(x.key))
}

// verifyReads reads l's member and its tombstone (a ZSCORE each).
func (sharedLock) verifyReads(l *Lock) []verifyRead { return sharedReads(l) }
