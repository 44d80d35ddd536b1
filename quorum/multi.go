package quorum

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
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

// AcquireMulti takes every one of names or none, retrying as Acquire does; the
// Lock holds them all under one value (Token) and one Until, and Extend, Release,
// the keep-alive and Done cover every name. Names are checked with ValidateName;
// duplicates are an error, and their order does not matter. It cannot be combined
// with WithPermits, WithShared, WithFair or WithFencing (ErrInvalidOption). A
// cancelled ctx gives an error matching both ErrNotAcquired and ctx.Err(); nothing
// is left set on any master.
func (m *Manager) AcquireMulti(ctx context.Context, names []string, ttl time.Duration, opts ...LockOption) (*Lock, error) {
	return m.acquireMulti(ctx, names, ttl, m.cfg.attempts, opts)
}

// TryAcquireMulti is AcquireMulti with one round.
func (m *Manager) TryAcquireMulti(ctx context.Context, names []string, ttl time.Duration, opts ...LockOption) (*Lock, error) {
	return m.acquireMulti(ctx, names, ttl, 1, opts)
}

// Names returns the names a Lock holds: one for a plain lock, permit, shared hold
// or leadership (the name given), every name of a multi-name lock in sorted order.
func (l *Lock) Names() []string {
	if p, ok := l.prim.(*multiLock); ok {
		return append([]string(nil), p.names...)
	}
	return []string{l.name}
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

func (m *Manager) acquireMulti(ctx context.Context, names []string, ttl time.Duration, attempts int, opts []LockOption) (*Lock, error) {
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	if sorted == nil {
		sorted = []string{}
	}
	opts = append(slices.Clip(opts), func(c *lockConfig) { c.multi = sorted })
	return m.acquire(ctx, strings.Join(sorted, " "), ttl, attempts, opts)
}

// multiAcquirer takes every name of a multi-name lock, or none.
type multiAcquirer struct {
	m     *Manager
	names []string // sorted
	keys  []string
}

func (m *Manager) newMultiAcquirer(lc *lockConfig) (acquirer, error) {
	switch {
	case len(lc.multi) == 0:
		return nil, fmt.Errorf("%w: no names", ErrInvalidName)
	case lc.fair || lc.fencing:
		return nil, fmt.Errorf("%w: a multi-name lock takes neither WithFair nor WithFencing", ErrInvalidOption)
	}
	a := &multiAcquirer{m: m, names: lc.multi}
	for i, name := range lc.multi {
		if err := checkName(name); err != nil {
			return nil, err
		}
		if i > 0 && lc.multi[i-1] == name {
			return nil, fmt.Errorf("%w: %q given twice", ErrInvalidName, name)
		}
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

// verify checks that every name holds l's value on n; revoked when some name
// holds its tombstone.
func (p *multiLock) verify(ctx context.Context, l *Lock, n *node) (Outcome, bool, error) {
	pipe := n.client.Pipeline()
	gets := make([]*redis.StringCmd, len(p.keys))
	for i, k := range p.keys {
		gets[i] = pipe.Get(ctx, k)
	}
	_, _ = pipe.Exec(ctx)
	out, revoked := OutcomeOK, false
	for _, g := range gets {
		v, err := g.Result()
		switch {
		case errors.Is(err, redis.Nil):
			out = max(out, OutcomeMissing)
		case err != nil && strings.HasPrefix(err.Error(), "WRONGTYPE"):
			out = OutcomeForeign
		case err != nil:
			return OutcomeError, false, err
		case v != l.value:
			out = OutcomeForeign
			revoked = revoked || isTombstoneOf(v, l.value)
		}
	}
	return out, revoked, nil
}
