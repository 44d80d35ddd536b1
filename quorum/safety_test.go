package quorum

import (
	"context"
	"errors"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/checker"
	"github.com/redlock/redlock/internal/faults"
	"github.com/redlock/redlock/internal/redistest"
)

// seedFor returns the seed of a test: REDLOCK_SEED when set, else a fixed value
// derived from the test's name. It is always printed, so a run can be replayed.
func seedFor(t testing.TB) int64 {
	t.Helper()
	if s := os.Getenv("REDLOCK_SEED"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		require.NoError(t, err, "REDLOCK_SEED")
		t.Logf("seed %d (from REDLOCK_SEED)", v)
		return v
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(t.Name()))
	v := int64(h.Sum64() >> 1)
	t.Logf("seed %d (replay with REDLOCK_SEED=%d)", v, v)
	return v
}

// scen is one scenario run: masters, a network of per-client proxies, the history
// recorder, a seeded random source, and the mutants under test (none normally).
type scen struct {
	t   *testing.T
	c   *redistest.Cluster
	net *faults.Net
	rec *checker.Recorder
	mut mutants
	// goRedis sends the clients' hot commands through go-redis (the second
	// wire.Rounder) instead of the pipelined transport.
	goRedis bool
	// stats counts every client's dropped connections and late replies.
	stats *connStats

	rngMu sync.Mutex
	rng   *rand.Rand
}

func newScen(t *testing.T, mut mutants, n int, args ...string) *scen {
	t.Helper()
	seed := seedFor(t)
	rec := checker.New(seed)
	// The Done check excuses lateness only as far as this process's own timers
	// were late at that moment (a loaded machine), never more.
	t.Cleanup(rec.ProbeScheduling())
	return &scen{
		t: t, mut: mut, rec: rec, net: faults.NewNet(t), stats: newConnStats(),
		c:   redistest.Start(t, n, redistest.Options{Args: args}),
		rng: rand.New(rand.NewPCG(uint64(seed), 1)),
	}
}

func (s *scen) intn(n int) int {
	s.rngMu.Lock()
	defer s.rngMu.Unlock()
	return s.rng.IntN(n)
}

func (s *scen) server(name string) *redistest.Server {
	for _, sv := range s.c.Servers {
		if sv.Name == name {
			return sv
		}
	}
	s.t.Fatalf("no master %s", name)
	return nil
}

// violate records a scenario-level failure (a time bound, an unexpected outcome).
func (s *scen) violate(format string, args ...any) {
	s.rec.Violate(checker.KindScenario, format, args...)
}

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
		errors.Is(err, ErrInvalidTTL) || errors.Is(err, ErrInvalidName) || errors.Is(err, ErrReleased) || errors.Is(err, ErrLost)
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

// watchDone records the moment the holder of l sees Done fire, and the deadline
// then (real converts the client's clock to real time). Beside it runs a timer
// armed like the lock's expiry, due at l's deadline and re-armed when it moves:
// how late it fired (or, not fired yet, how late it is when Done is seen) is what
// the machine did to a timer due at that instant, which the checker excuses in a
// late Done, never more (checker.Hold.TimerLate).
func watchDone(l *Lock, h *checker.Hold, real func(time.Time) time.Time) {
	var mu sync.Mutex
	var due, fired time.Time
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
		if fired.IsZero() {
			fired = seen
		}
		if due.Equal(final) {
			h.TimerLate(due, fired)
		}
		mu.Unlock()
		h.Done(seen, final)
		return
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

// checkKeys checks every reachable master's lock keys (fence counters aside): each
// has a TTL, and with quiescent none is left at all.
func (s *scen) checkKeys(quiescent bool, masters ...string) {
	for _, sv := range s.c.Servers {
		if len(masters) > 0 && !slicesContains(masters, sv.Name) {
			continue
		}
		s.checkKeysOn(sv.Name, sv.Client(), quiescent)
	}
}

// checkKeysOn checks the lock keys of one server (a master of the cluster, or a
// server that took a master's place); a server that does not answer is skipped.
func (s *scen) checkKeysOn(name string, cl *redis.Client, quiescent bool) {
	ctx := context.Background()
	keys, err := cl.Keys(ctx, DefaultKeyPrefix+"*").Result()
	if err != nil {
		return // down: nothing to check
	}
	pttl := map[string]time.Duration{}
	for _, k := range keys {
		if strings.HasSuffix(k, fenceSuffix) {
			continue
		}
		if d, err := cl.PTTL(ctx, k).Result(); err == nil && d != -2*time.Nanosecond && d != -2 {
			pttl[k] = d
		}
	}
	s.rec.Keys(name, pttl, quiescent)
}

func slicesContains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// values returns key's value on every master ("" when missing or down).
func (s *scen) values(key string) map[string]string {
	out := map[string]string{}
	for _, sv := range s.c.Servers {
		out[sv.Name] = sv.Client().Get(context.Background(), key).Val()
	}
	return out
}

// foreignCheck runs fn (a call with a foreign token) and checks that the owner's
// value of key stayed where it was.
func (s *scen) foreignCheck(key, owner string, fn func()) {
	before := s.values(key)
	fn()
	after := s.values(key)
	for name, v := range before {
		if v == owner {
			s.rec.Foreign(name, key, v, after[name])
		}
	}
}

// scenario is one named fault scenario. It records into s; a broken safety
// property shows up as a violation in s.rec.
type scenario func(s *scen)

// runSafe runs a scenario that must keep every safety property.
func runSafe(t *testing.T, fn scenario, n int, args ...string) {
	s := newScen(t, mutants{}, n, args...)
	fn(s)
	s.rec.Report(t)
}

// runHazard runs a scenario that breaks one of Redlock's assumptions: the checker
// must detect an overlap.
func runHazard(t *testing.T, fn scenario, n int, args ...string) {
	s := newScen(t, mutants{}, n, args...)
	fn(s)
	if !overlapFound(t, s) {
		t.Errorf("the checker did not detect the overlap this hazard causes (seed %d)", s.rec.Seed)
	}
}

// runFenced runs a hazard mitigated by fencing: the locks still overlap (Redlock
// cannot prevent it; the checker must see it, which shows the hazard struck in
// this run) but the fenced resource refused the stale holder (the scenario
// records a violation otherwise), and nothing else may break.
func runFenced(t *testing.T, fn scenario, n int, args ...string) {
	s := newScen(t, mutants{}, n, args...)
	fn(s)
	if !overlapFound(t, s) {
		t.Errorf("the locks did not overlap: the hazard did not strike, so fencing was not tested (seed %d)", s.rec.Seed)
	}
	var other []checker.Violation
	for _, v := range s.rec.Violations() {
		if v.Kind != checker.KindOverlap {
			other = append(other, v)
		}
	}
	for _, v := range other {
		t.Errorf("%s: %s", v.Kind, v.Detail)
	}
	if len(other) > 0 {
		if path, err := s.rec.Write(historyDir(t), t.Name()); err == nil {
			t.Errorf("replay with REDLOCK_SEED=%d; history in %s", s.rec.Seed, path)
		}
	}
}

func overlapFound(t *testing.T, s *scen) bool {
	found := false
	for _, v := range s.rec.Violations() {
		if v.Kind == checker.KindOverlap {
			found = true
			t.Logf("overlap detected: %s", v.Detail)
		}
	}
	return found
}

// historyDir is where a failing test writes its history: REDLOCK_HISTORY_DIR, else
// the test's temporary directory.
func historyDir(t *testing.T) string {
	if d := os.Getenv("REDLOCK_HISTORY_DIR"); d != "" {
		return d
	}
	return t.TempDir()
}

// metEvery reports whether the Manager has connected to every master at least once
// (it knows each master's run_id), so a later run_id change is noticed.
func (m *Manager) metEvery() bool {
	for _, n := range m.nodes {
		n.mu.Lock()
		id := n.runID
		n.mu.Unlock()
		if id == "" {
			return false
		}
	}
	return true
}
