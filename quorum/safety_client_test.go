package quorum

import (
	"context"
	"errors"
	"net"
	"os"
	"sync"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/checker"
	"github.com/redlock/redlock/internal/faults"
)

// client is one lock client with its own proxy to every master.
type client struct {
	s     *scen
	name  string
	m     *Manager
	clock realClock // nil: real time

	driftFactor float64
	driftExtra  time.Duration
}

// realClock is a test clock that can convert its readings to real time.
type realClock interface {
	Clock
	Real(time.Time) time.Time
}

func (s *scen) client(name string, opts ...Option) *client {
	s.t.Helper()
	cl := &client{s: s, name: name}
	nodes := make([]Node, len(s.c.Servers))
	for i, sv := range s.c.Servers {
		p := s.net.Proxy(name, sv.Name, sv.Addr())
		nodes[i] = Node{Name: sv.Name, Addr: sv.Addr(), Dialer: p.Dial}
	}
	base := []Option{WithRestartQuarantine(0), WithNodeTimeout(100 * time.Millisecond), WithObserver(s.stats)}
	m, err := New(nodes, append(base, opts...)...)
	require.NoError(s.t, err)
	s.t.Cleanup(func() { _ = m.Close() })
	cl.m = m
	// The drift budget the configuration asks for, read before a mutant changes
	// the library's own (budget).
	cl.driftFactor, cl.driftExtra = m.cfg.driftFactor, m.cfg.driftExtra
	if s.goRedis {
		useGoRedis(m)
	}
	s.mut.apply(m, nodes)
	if rc, ok := m.cfg.clock.(realClock); ok {
		cl.clock = rc
	}
	return cl
}

// net applies fn to this client's proxies to the named masters (all when none).
func (c *client) net(fn func(*faults.Proxy), masters ...string) { c.s.net.Each(c.name, fn, masters...) }

// real converts a reading of the client's clock to real time.
func (c *client) real(t time.Time) time.Time {
	if c.clock != nil {
		return c.clock.Real(t)
	}
	return t
}

// typed reports whether err is a failure the library promises: a round or node
// error naming masters, or a sentinel of a check made without I/O.
func typed(err error) bool {
	var re *RoundError
	var ne *NodeError
	return errors.As(err, &re) || errors.As(err, &ne) ||
		errors.Is(err, ErrInvalidArgument) || errors.Is(err, ErrInvalidName) || errors.Is(err, ErrReleased) || errors.Is(err, ErrLost)
}

// roundOf returns the lock's deadline and the start of the round that set it, as
// the library read its clock before sending the round's first command.
func roundOf(l *Lock) (from, until time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.untilFrom, l.until // read together: an extension moves both
}

// held is a lock a client holds, with its record in the history.
type held struct {
	c *client
	l *Lock
	h *checker.Hold
}

// try makes one acquisition round and records it: a success as a hold (and its
// validity bound), a failure as a typed-error check. It returns nil on failure.
func (c *client) try(ctx context.Context, name string, ttl time.Duration, opts ...LockOption) (*held, error) {
	start := c.m.cfg.clock.Now()
	l, err := c.m.TryAcquire(ctx, name, ttl, opts...)
	ret := time.Now()
	if err != nil {
		c.s.rec.Failure(c.name, "acquire", err, typed(err))
		return nil, err
	}
	from, until := roundOf(l)
	c.s.rec.Bound(c.name, start, from, until, ttl, c.budget(ttl))
	h := &held{c: c, l: l, h: c.s.rec.Acquired(c.name, name, ret, c.real(l.Until()))}
	c.s.mut.watchLateCancel(l)
	// The holder stops when it sees Done: record that moment, as a user's code
	// would see it, and the deadline it had then.
	go watchDone(l, h.h, c.real)
	return h, nil
}

// stalled reports whether err is a round in which every master timed out: on a
// loaded machine (the race detector, other test binaries) a round can stall past
// a short node timeout on every master at once, which tells nothing about the
// algorithm. A round that any master answered, or refused, is no stall.
func stalled(err error) bool {
	var re *RoundError
	if !errors.As(err, &re) || len(re.Nodes) == 0 {
		return false
	}
	for _, n := range re.Nodes {
		var ne net.Error
		timeout := errors.Is(n.Err, os.ErrDeadlineExceeded) || (errors.As(n.Err, &ne) && ne.Timeout())
		if n.Outcome != OutcomeError || !timeout {
			return false
		}
	}
	return true
}

// unstalled runs op until it returns anything but a stall (stalled), at most five
// times; it is for a step a scenario needs to succeed, never for one whose
// failure is what the scenario checks.
func unstalled(op func() error) error {
	var err error
	for range 5 {
		if err = op(); !stalled(err) {
			return err
		}
	}
	return err
}

// watchDone records the moment the holder of l sees Done fire, and the deadline
// then (real converts the client's clock to real time). Beside it runs a timer
// armed like the lock's expiry, due at l's deadline and re-armed when it moves:
// how late it fired (or, not fired yet, how late it is when Done is seen) is what
// the machine did to a timer due at that instant, which the checker excuses in a
// late Done, never more (checker.Hold.TimerLate).
func watchDone(l *Lock, h *checker.Hold, real func(time.Time) time.Time) {
	due, fired, seen, final := shadowTimer(l, real)
	if due.Equal(final) {
		h.TimerLate(due, fired)
	}
	h.Done(seen, final)
}

// shadowTimer runs, until l's Done is seen, a timer armed like the lock's
// expiry: due at l's deadline (real converts the client's clock to real time)
// and re-armed whenever it moves. It returns the deadline last armed, when that
// timer fired (seen, when it had not fired yet), when Done was seen, and l's
// deadline then.
func shadowTimer(l *Lock, real func(time.Time) time.Time) (time.Time, time.Time, time.Time, time.Time) {
	var mu sync.Mutex
	var due, fired time.Time // a timer stopped too late may still write fired
	for {
		changed := l.UntilChanged()
		at := real(l.Until())
		mu.Lock()
		due, fired = at, time.Time{}
		mu.Unlock()
		t := time.AfterFunc(time.Until(at), func() {
			now := time.Now()
			mu.Lock()
			if due.Equal(at) {
				fired = now
			}
			mu.Unlock()
		})
		select {
		case <-changed:
			t.Stop()
			continue
		case <-l.Done():
		}
		seen := time.Now()
		t.Stop()
		final := real(l.Until())
		mu.Lock()
		defer mu.Unlock()
		if fired.IsZero() {
			fired = seen
		}
		return due, fired, seen, final
	}
}

// until polls try every 1-4 ms until it succeeds or the deadline passes.
func (c *client) until(ctx context.Context, deadline time.Time, name string, ttl time.Duration, opts ...LockOption) *held {
	for time.Now().Before(deadline) {
		if h, err := c.try(ctx, name, ttl, opts...); err == nil {
			return h
		}
		time.Sleep(time.Duration(1+c.s.intn(4)) * time.Millisecond)
	}
	return nil
}

func (h *held) extend(ctx context.Context, ttl time.Duration) error {
	start := h.c.m.cfg.clock.Now()
	err := h.l.Extend(ctx, ttl)
	ret := time.Now()
	if err != nil {
		h.c.s.rec.Failure(h.c.name, "extend", err, typed(err))
		return err
	}
	from, until := roundOf(h.l)
	h.c.s.rec.Bound(h.c.name, start, from, until, ttl, h.c.budget(ttl))
	h.h.Extended(ret, h.c.real(h.l.Until()))
	return nil
}

// budget is the drift budget of the configuration, computed here so that a mutant
// of the library's own computation cannot hide from the bound check.
func (c *client) budget(ttl time.Duration) time.Duration {
	return time.Duration(float64(ttl)*c.driftFactor) + c.driftExtra
}

// holdToEnd keeps the lock until its holder learns it is lost (Done), as a user's
// code does, then releases it.
func (h *held) holdToEnd(ctx context.Context) {
	<-h.l.Done()
	_ = h.release(ctx)
}

func (h *held) release(ctx context.Context) error {
	h.h.Released(time.Now())
	err := h.l.Release(ctx)
	if err != nil {
		h.c.s.rec.Failure(h.c.name, "release", err, typed(err))
	}
	return err
}

// worker takes name again and again until ctx ends, holding it for hold (never
// past its validity) and releasing it; it returns the number of acquisitions.
func (c *client) worker(ctx context.Context, name string, ttl, hold time.Duration) int {
	n := 0
	for ctx.Err() == nil {
		// ctx ends the work between rounds, never inside one: a round cancelled in
		// flight may leave a key for its TTL (its SET can land after the clean-up
		// release), which the quiescence check would take for a key left behind.
		// TestRandomCancellationLeavesNothingBehind covers cancellation in flight.
		h, err := c.try(context.Background(), name, ttl)
		if err != nil {
			time.Sleep(time.Duration(1+c.s.intn(5)) * time.Millisecond)
			continue
		}
		n++
		d := min(hold, time.Until(c.real(h.l.Until())))
		if d > 0 {
			time.Sleep(d)
		}
		_ = h.release(context.Background())
	}
	return n
}

// workers runs a worker per client for d and returns the acquisitions per client.
func workers(d time.Duration, name string, ttl, hold time.Duration, cls ...*client) []int {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	out := make([]int, len(cls))
	var wg sync.WaitGroup
	for i, c := range cls {
		wg.Go(func() { out[i] = c.worker(ctx, name, ttl, hold) })
	}
	wg.Wait()
	return out
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}
