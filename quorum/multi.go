package quorum

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Multi-name locks: several names taken all or none, under one value.
//
// One script per master checks that none of the keys exists and then sets every
// one of them, NX in effect, with the same value and TTL, atomically; a master that
// finds any key taken sets nothing. The round needs a majority of masters that set
// all the keys, like any Redlock round; a failed round releases every key it set on
// every master. No round ever holds some names while it waits for others, so
// overlapping sets taken in any order never deadlock. Extend and Release cover
// every name in one script per master. The keys are ordinary lock keys: a plain
// lock of one of the names (this package's or another Redlock client's SET NX)
// excludes the multi-name hold, and the reverse.

// Multi is a set of names on a Manager taken all or none: a hold of every name
// under one value (Token) and one Until, which excludes any other holder of any of
// the names (a plain lock, another multi-name hold, a shared hold, a peer's SET
// NX), under Redlock's assumptions. No acquisition holds some names while it waits
// for others, so overlapping sets taken in any order never deadlock. Multi holds
// no state besides its names, and is safe for concurrent use.
//
// It does not guarantee fairness: a waiter is woken by a release of its first
// name only (the others are noticed at its next retry), and a stream of holders of
// single names can starve it. The zero value is not usable: get a Multi from
// Manager.Multi.
type Multi struct {
	m     *Manager
	names []string // sorted
}

// Multi returns the set of names on m. Each name follows ValidateName; at least
// one, none twice (ErrInvalidName); their order does not matter. It does no I/O.
func (m *Manager) Multi(names ...string) (*Multi, error) {
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	if len(sorted) == 0 {
		return nil, fmt.Errorf("%w: no names", ErrInvalidName)
	}
	for i, name := range sorted {
		if err := checkName(name); err != nil {
			return nil, err
		}
		if i > 0 && sorted[i-1] == name {
			return nil, fmt.Errorf("%w: %q given twice", ErrInvalidName, name)
		}
	}
	return &Multi{m: m, names: sorted}, nil
}

// Acquire takes every name or none, retrying as Manager.Acquire does (a release
// of the first name wakes it; WithWait bounds the wait). The Lock holds them all:
// Name is the names, sorted, joined by a space; Key the first name's key; Extend,
// Release, Verify, the keep-alive and Done cover every name. It takes neither
// WithFair nor WithFencing (ErrInvalidArgument). A cancelled ctx gives an error
// matching both ErrNotAcquired and ctx.Err(); nothing is left set on any master.
func (mu *Multi) Acquire(ctx context.Context, ttl time.Duration, opts ...LockOption) (*Lock, error) {
	return mu.m.acquireMulti(ctx, mu.names, ttl, mu.m.cfg.attempts, opts)
}

// TryAcquire is Acquire with one round: an error matching ErrHeld when some name
// is held.
func (mu *Multi) TryAcquire(ctx context.Context, ttl time.Duration, opts ...LockOption) (*Lock, error) {
	return mu.m.acquireMulti(ctx, mu.names, ttl, 1, opts)
}

// multiLock is the primitive of a multi-name hold.
type multiLock struct {
	names []string
	keys  []string
}

func (p *multiLock) extend(ctx context.Context, l *Lock, ttl time.Duration) (time.Time, *Report, error) {
	start := l.m.cfg.clock.Now()
	rep := l.m.scriptOnAll(ctx, opExtend, l.key, multiExtendScript, p.keys, nil, l.value, msArg(ttl))
	return l.m.scoredExtend(rep, start, ttl)
}

// release deletes every name where it is ours and wakes each name's waiters.
func (p *multiLock) release(ctx context.Context, l *Lock) *Report {
	return l.m.scriptOnAll(ctx, opRelease, l.key, multiReleaseScript, p.keys, released, l.value, "1")
}

// acquireMulti takes sorted, names checked by Manager.Multi.
func (m *Manager) acquireMulti(ctx context.Context, sorted []string, ttl time.Duration, attempts int, opts []LockOption) (*Lock, error) {
	return m.acquire(ctx, strings.Join(sorted, " "), ttl, attempts, primSpec{multi: sorted}, opts)
}

// multiAcquirer takes every name of a multi-name lock, or none.
type multiAcquirer struct {
	m     *Manager
	names []string // sorted
	keys  []string
}

func (m *Manager) newMultiAcquirer(lc *lockConfig) (acquirer, error) {
	if lc.fair || lc.fencing {
		return nil, fmt.Errorf("%w: a multi-name lock takes neither WithFair nor WithFencing", ErrInvalidArgument)
	}
	a := &multiAcquirer{m: m, names: lc.multi}
	for _, name := range lc.multi { // checked by Manager.Multi
		a.keys = append(a.keys, m.Key(name))
	}
	return a, nil
}

// waitKey is the first name's key: a release of it wakes the waiter; a release of
// another name is noticed at the next retry.
func (a *multiAcquirer) waitKey() string { return a.keys[0] }

func (a *multiAcquirer) describe(o *Owner) { o.Kind, o.Count = ownerMulti, len(a.keys) }

func (a *multiAcquirer) won(context.Context, *Lock) error { return nil }

// round runs multi_acquire.lua on every master: all keys or none there.
func (a *multiAcquirer) round(ctx context.Context, start time.Time, value string, ttl time.Duration, _ *fairWaiter) (*Lock, error) {
	m := a.m
	rep := m.scriptOnAll(ctx, opAcquire, a.keys[0], multiAcquireScript, a.keys, granted, value, msArg(ttl))
	if until, ok := m.score(rep, start, ttl); ok {
		return &Lock{m: m, name: strings.Join(a.names, " "), key: a.keys[0], value: value, ttl: ttl, votes: *rep,
			start: start, until: until, untilFrom: start, keysUntil: m.keysUntil(start, ttl), prim: &multiLock{names: a.names, keys: a.keys}}, nil
	}
	m.scriptOnAll(backgroundFor(ctx), opRelease, a.keys[0], multiReleaseScript, a.keys, released, value, "0")
	return nil, m.roundError(rep)
}

// watchKeys returns the keys whose wake-up channels the loss watch of a
// multi-name lock listens on: every name's, so that a force-expire of any one
// of them is heard.
func (p *multiLock) watchKeys() []string { return p.keys }

// verifyReads reads every name's value (a GET each).
func (p *multiLock) verifyReads(*Lock) []verifyRead {
	reads := make([]verifyRead, len(p.keys))
	for i, k := range p.keys {
		reads[i] = getRead(k)
	}
	return reads
}
