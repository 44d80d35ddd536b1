package quorum

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/redlock/redlock/internal/checker"
	"github.com/redlock/redlock/internal/defaults"
)

// How the fault suite records the primitives' holds in the history (the checker's
// invariants: at most N holders, shared vs exclusive, terms increasing, all names
// or none).

// primHold is a hold of a primitive with its record.
type primHold struct {
	c *client
	l *Lock
	h *checker.Hold
}

// watch records the acquisition's bound and, in the background, the moment its
// holder sees Done.
func (c *client) watch(l *Lock, start time.Time, ttl time.Duration, h *checker.Hold) *primHold {
	from, until := roundOf(l)
	c.s.rec.Bound(c.name, start, from, until, ttl, c.budget(ttl))
	go watchDone(l, h, c.real)
	return &primHold{c: c, l: l, h: h}
}

// failed records a failed acquisition (a typed error, or the context's end).
func (c *client) failed(op string, err error) {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return
	}
	c.s.rec.Failure(c.name, op, err, typed(err))
}

// tryPermit takes one permit of name (n permits) in one round, or waits up to
// wait with Acquire when wait > 0.
func (c *client) tryPermit(ctx context.Context, name string, n int, ttl, wait time.Duration, opts ...LockOption) *primHold {
	start := c.m.cfg.clock.Now()
	opts = append(opts, withPermits(n))
	var l *Lock
	var err error
	if wait > 0 {
		wctx, cancel := context.WithTimeout(ctx, wait)
		l, err = c.m.Acquire(wctx, name, ttl, opts...)
		cancel()
	} else {
		l, err = c.m.TryAcquire(ctx, name, ttl, opts...)
	}
	if err != nil {
		c.failed("acquire permit", err)
		return nil
	}
	return c.watch(l, start, ttl, c.s.rec.Acquired(c.name, name, time.Now(), c.real(l.Until())))
}

// tryShared takes a shared hold of name, or an exclusive one (a plain lock).
func (c *client) tryShared(ctx context.Context, name string, shared bool, ttl, wait time.Duration, opts ...LockOption) *primHold {
	start := c.m.cfg.clock.Now()
	if shared {
		opts = append(opts, withShared())
	}
	wctx, cancel := context.WithTimeout(ctx, max(wait, time.Millisecond))
	defer cancel()
	var l *Lock
	var err error
	if wait > 0 {
		l, err = c.m.Acquire(wctx, name, ttl, opts...)
	} else {
		l, err = c.m.TryAcquire(ctx, name, ttl, opts...)
	}
	if err != nil {
		c.failed("acquire shared", err)
		return nil
	}
	ret := time.Now()
	if shared {
		return c.watch(l, start, ttl, c.s.rec.AcquiredShared(c.name, name, ret, c.real(l.Until())))
	}
	return c.watch(l, start, ttl, c.s.rec.Acquired(c.name, name, ret, c.real(l.Until())))
}

// tryMulti takes every one of names in one round, and checks at once that no
// name is held by another value on a quorum of masters (all names or none).
func (c *client) tryMulti(ctx context.Context, names []string, ttl time.Duration, opts ...LockOption) *primHold {
	start := c.m.cfg.clock.Now()
	l, err := c.m.tryMulti(ctx, names, ttl, opts...)
	if err != nil {
		c.failed("acquire multi", err)
		return nil
	}
	ph := c.watch(l, start, ttl, c.s.rec.AcquiredMulti(c.name, namesOf(l), time.Now(), c.real(l.Until())))
	c.checkAllNames(l)
	return ph
}

// checkAllNames reads every name of l on every master: a name whose key holds
// another value on a quorum while l is valid was never l's (a partial hold).
func (c *client) checkAllNames(l *Lock) {
	var got []string
	for _, name := range namesOf(l) {
		foreign := 0
		for _, v := range c.s.values(c.m.Key(name)) {
			if v != "" && v != l.Token() {
				foreign++
			}
		}
		if foreign < c.m.Quorum() {
			got = append(got, name)
		}
	}
	if time.Now().Before(c.real(l.Until())) {
		c.s.rec.Partial(c.name, namesOf(l), got)
	}
}

// campaign waits up to wait to lead the election name; the hold carries the term.
func (c *client) campaign(ctx context.Context, name, value string, ttl, wait time.Duration, opts ...LockOption) (*primHold, *Leadership) {
	e, err := c.m.Election(name)
	if err != nil {
		c.s.violate("election %s: %v", name, err)
		return nil, nil
	}
	start := c.m.cfg.clock.Now()
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	ld, err := e.Campaign(wctx, value, ttl, opts...)
	if err != nil {
		c.failed("campaign", err)
		return nil, nil
	}
	h := c.s.rec.Acquired(c.name, name, time.Now(), c.real(ld.Until()))
	h.SetTerm(ld.Term())
	return c.watch(ld.Lock, start, ttl, h), ld
}

// holdFor keeps the hold for d or until Done, then releases it.
func (p *primHold) holdFor(d time.Duration) {
	t := time.NewTimer(d)
	select {
	case <-t.C:
	case <-p.l.Done():
	}
	t.Stop()
	p.h.Released(time.Now())
	if err := p.l.Release(context.Background()); err != nil {
		p.c.s.rec.Failure(p.c.name, "release", err, typed(err))
	}
}

// checkPrimKeys checks every reachable master's keys as checkKeys does, leaving out
// the keys that have no TTL by design (fence and term counters, election records).
func (s *scen) checkPrimKeys(quiescent bool) {
	ctx := context.Background()
	for _, sv := range s.c.Servers {
		cl := sv.Client()
		keys, err := cl.Keys(ctx, defaults.KeyPrefix+"*").Result()
		if err != nil {
			continue
		}
		pttl := map[string]time.Duration{}
		for _, k := range keys {
			if strings.HasSuffix(k, fenceSuffix) || strings.HasSuffix(k, leaderSuffix+termSuffix) {
				continue
			}
			if d, err := cl.PTTL(ctx, k).Result(); err == nil && d != -2 {
				pttl[k] = d
			}
		}
		s.rec.Keys(sv.Name, pttl, quiescent)
	}
}
