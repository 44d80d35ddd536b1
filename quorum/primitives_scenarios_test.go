package quorum

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/redlock/redlock/internal/checker"
	"github.com/redlock/redlock/internal/faults"
)

// The fault suite of the primitives: each primitive's workload runs under each
// fault, with the checker extended to the primitive's invariant.

const (
	primSem      = "prim/sem"
	primRW       = "prim/rw"
	primElection = "prim/leader"
	primPermits  = 2
)

// primMultiSets are the overlapping name sets of the multi-name workload, each
// given in its own order.
var primMultiSets = [][]string{{"prim/a", "prim/b"}, {"prim/c", "prim/b"}, {"prim/a", "prim/c"}, {"prim/c", "prim/a", "prim/b"}}

// workload is one primitive's clients at work until ctx ends; it returns the
// acquisitions per client. opts are handed to every acquisition (the mutants').
type workload struct {
	name  string
	setup func(s *scen)
	run   func(ctx context.Context, s *scen, cls []*client, opts []LockOption) []int
	// min is the least number of acquisitions a fault-free run must make.
	min int
}

// each runs fn for every client until ctx ends and collects the counts.
func each(ctx context.Context, cls []*client, fn func(i int, c *client) bool) []int {
	out := make([]int, len(cls))
	var wg sync.WaitGroup
	for i, c := range cls {
		wg.Go(func() {
			for ctx.Err() == nil {
				if fn(i, c) {
					out[i]++
				} else {
					time.Sleep(time.Duration(1+c.s.intn(5)) * time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
	return out
}

// hold is a random holding time of the workloads, up to max.
func (s *scen) hold(max time.Duration) time.Duration {
	return time.Duration(1+s.intn(int(max/time.Millisecond))) * time.Millisecond
}

// primTTL is the workloads' TTL: short, so validity ends under faults.
const primTTL = 300 * time.Millisecond

var primWorkloads = []workload{
	{
		name:  "semaphore",
		setup: func(s *scen) { s.rec.Limit(primSem, primPermits) },
		run: func(ctx context.Context, s *scen, cls []*client, opts []LockOption) []int {
			return each(ctx, cls, func(i int, c *client) bool {
				var o []LockOption
				if i%2 == 1 {
					o = append(o, WithKeepAlive(KeepAlive{Fraction: 0.5}))
				}
				wait := time.Duration(0)
				if i == 0 {
					wait = time.Duration(20+s.intn(200)) * time.Millisecond // cancelled at a random point
				}
				h := c.tryPermit(context.Background(), primSem, primPermits, primTTL, wait, append(o, opts...)...)
				if h == nil {
					return false
				}
				h.holdFor(s.hold(2 * primTTL))
				return true
			})
		},
		min: 5,
	},
	{
		name: "multi-name",
		run: func(ctx context.Context, s *scen, cls []*client, opts []LockOption) []int {
			return each(ctx, cls, func(i int, c *client) bool {
				h := c.tryMulti(context.Background(), primMultiSets[i%len(primMultiSets)], primTTL, opts...)
				if h == nil {
					return false
				}
				h.holdFor(s.hold(primTTL / 2))
				return true
			})
		},
		min: 5,
	},
	{
		name: "shared",
		run: func(ctx context.Context, s *scen, cls []*client, opts []LockOption) []int {
			return each(ctx, cls, func(i int, c *client) bool {
				shared := i != 0
				var o []LockOption
				if i == 1 {
					o = append(o, WithKeepAlive(KeepAlive{Fraction: 0.5}))
				}
				// The exclusive client waits (and so marks itself against new shared
				// holders); the shared ones try.
				wait := time.Duration(0)
				if !shared {
					wait = time.Duration(50+s.intn(300)) * time.Millisecond
				}
				h := c.tryShared(context.Background(), primRW, shared, primTTL, wait, append(o, opts...)...)
				if h == nil {
					return false
				}
				h.holdFor(s.hold(primTTL / 2))
				return true
			})
		},
		min: 5,
	},
	{
		name: "election",
		run: func(ctx context.Context, s *scen, cls []*client, opts []LockOption) []int {
			return each(ctx, cls, func(i int, c *client) bool {
				h, _ := c.campaign(context.Background(), primElection, c.name, primTTL, time.Duration(50+s.intn(400))*time.Millisecond, opts...)
				if h == nil {
					return false
				}
				h.holdFor(s.hold(2 * primTTL))
				return true
			})
		},
		min: 3,
	},
}

// primFault is a fault schedule: it runs while the workload does, until ctx ends.
type primFault struct {
	name string
	args []string // redis-server arguments
	run  func(ctx context.Context, s *scen, cls []*client)
	// avail: the workload must still make progress.
	avail bool
}

var primFaults = []primFault{
	{name: "no fault", avail: true, run: func(context.Context, *scen, []*client) {}},
	{name: "2 of 5 killed", avail: true, run: func(ctx context.Context, s *scen, _ []*client) {
		sleepCtx(ctx, 300*time.Millisecond)
		s.server("b").Kill()
		s.server("d").Kill()
		s.rec.Event("killed b and d")
	}},
	{name: "overlapping majorities", run: func(_ context.Context, s *scen, cls []*client) {
		// Clients reach {a,b,c}, {c,d,e}, {a,b,d,e}-less-one in turn: majorities that
		// overlap on one master.
		cuts := [][]string{{"d", "e"}, {"a", "b"}, {"c"}, {"b", "e"}}
		for i, c := range cls {
			c.net((*faults.Proxy).Blackhole, cuts[i%len(cuts)]...)
		}
	}},
	{name: "master paused", avail: true, run: func(ctx context.Context, s *scen, _ []*client) {
		sleepCtx(ctx, 200*time.Millisecond)
		s.rec.Event("pause c")
		faults.Pause(s.server("c"), 2*primTTL)
		s.rec.Event("resume c")
	}},
	{name: "lost replies", run: func(_ context.Context, s *scen, cls []*client) {
		cls[0].net((*faults.Proxy).LoseReplies, "c", "d")
		cls[1].net((*faults.Proxy).LoseReplies, "e")
	}},
	{name: "nemesis", args: aofAlways, avail: true, run: nemesis},
}

// nemesis kills and restarts masters (AOF always), pauses them, partitions
// clients from some, adds latency, loses replies and resets connections, one
// fault at a time, seeded, until ctx ends.
func nemesis(ctx context.Context, s *scen, cls []*client) {
	masters := []string{"a", "b", "c", "d", "e"}
	for ctx.Err() == nil {
		m := masters[s.intn(len(masters))]
		cl := cls[s.intn(len(cls))]
		hold := time.Duration(50+s.intn(400)) * time.Millisecond
		var some []string
		for _, x := range masters {
			if s.intn(2) == 0 {
				some = append(some, x)
			}
		}
		switch s.intn(6) {
		case 0:
			s.rec.Event("kill and restart %s", m)
			faults.KillRestart(s.server(m), hold/4, true)
		case 1:
			s.rec.Event("pause %s for %v", m, hold)
			faults.Pause(s.server(m), hold)
		case 2:
			s.rec.Event("partition %s from %v for %v", cl.name, some, hold)
			cl.net((*faults.Proxy).Blackhole, some...)
			sleepCtx(ctx, hold)
		case 3:
			lat := time.Duration(s.intn(40)) * time.Millisecond
			s.rec.Event("latency %v from %s to %v for %v", lat, cl.name, some, hold)
			cl.net(func(p *faults.Proxy) { p.SetLatency(lat, lat) }, some...)
			sleepCtx(ctx, hold)
		case 4:
			s.rec.Event("lost replies from %v to %s for %v", some, cl.name, hold)
			cl.net((*faults.Proxy).LoseReplies, some...)
			sleepCtx(ctx, hold)
		case 5:
			s.rec.Event("reset %s's connections to %v", cl.name, some)
			cl.net((*faults.Proxy).Reset, some...)
			sleepCtx(ctx, hold)
		}
		s.net.HealAll()
	}
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// runPrim runs workload w under fault f for d with four clients, then heals,
// waits for quiescence and checks the keys. It returns the acquisitions.
func runPrim(s *scen, w workload, f primFault, d time.Duration, opts []LockOption) int {
	if w.setup != nil {
		w.setup(s)
	}
	var cls []*client
	for _, n := range []string{"A", "B", "C", "D"} {
		cls = append(cls, s.client(n))
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { f.run(ctx, s, cls) })
	var lag time.Duration
	wg.Go(func() { lag = schedulingLag(ctx) })
	got := w.run(ctx, s, cls, opts)
	wg.Wait()
	s.t.Logf("the test process's worst timer lateness: %v (Done is checked against the deadline + %v)", lag, checker.DoneSlack)
	s.net.HealAll()
	time.Sleep(primTTL + 150*time.Millisecond) // quiescence: late commands expire
	s.checkPrimKeys(true)
	n := sum(got)
	s.t.Logf("%s under %s: acquisitions per client %v", w.name, f.name, got)
	if f.avail && n < w.min {
		s.violate("%s under %s: only %d acquisitions in %v", w.name, f.name, n, d)
	}
	return n
}

// TestPrimitiveScenarios runs every primitive under every fault of the suite; the
// checker must find nothing.
func TestPrimitiveScenarios(t *testing.T) {
	for _, w := range primWorkloads {
		t.Run(w.name, func(t *testing.T) {
			for _, f := range primFaults {
				t.Run(f.name, func(t *testing.T) {
					d := 1500 * time.Millisecond
					if f.name == "nemesis" {
						d = primSoak(t)
					}
					s := newScen(t, mutants{}, 5, f.args...)
					runPrim(s, w, f, d, nil)
					if v := s.rec.Report(t); len(v) == 0 {
						t.Logf("%s", fmt.Sprintf("%d holds, no violation", s.rec.Holds()))
					}
				})
			}
		})
	}
}

// primSoak is the nemesis run's length: 5s, or REDLOCK_SOAK when set.
func primSoak(t *testing.T) time.Duration {
	if testing.Short() {
		return 2 * time.Second
	}
	d := soakDuration(t)
	if d == 60*time.Second {
		return 5 * time.Second
	}
	return d
}

// scenPermitsOverlappingMajorities is the trap of counting permits per master: 5
// masters, 2 permits, three clients that each reach 3 or 4 masters ({a,b,c},
// {c,d,e}, {a,b,d,e}) take a permit one after the other and hold it. Counted per
// master with a simple majority, all three win (9 grants fit in 10 slots); with
// slots, the third never gets in while two hold.
func scenPermitsOverlappingMajorities(opts ...LockOption) scenario {
	return func(s *scen) {
		const ttl = time.Second
		s.rec.Limit(primSem, primPermits)
		cuts := [][]string{{"d", "e"}, {"a", "b"}, {"c"}}
		var cls []*client
		for i, n := range []string{"A", "B", "C"} {
			c := s.client(n)
			c.net((*faults.Proxy).Blackhole, cuts[i]...)
			cls = append(cls, c)
		}
		got := 0
		for range 3 {
			var hs []*primHold
			for _, c := range cls {
				if h := c.tryPermit(context.Background(), primSem, primPermits, ttl, 0, opts...); h != nil {
					hs = append(hs, h)
					got++
				}
			}
			for _, h := range hs {
				h.holdFor(0)
			}
		}
		if got == 0 {
			s.violate("no permit taken through the overlapping majorities")
		}
		s.net.HealAll()
		s.checkPrimKeys(true)
	}
}

// TestPermitsOverlappingMajorities: the slots design stays within N holders where
// counting per master does not (TestPrimitiveMutantsAreCaught).
func TestPermitsOverlappingMajorities(t *testing.T) {
	runSafe(t, scenPermitsOverlappingMajorities(), 5)
}

// scenElectionOverlappingMajorities: candidate A reaches {a,b,c}, B reaches
// {c,d,e}; they lead in turn. The term must still increase: B's read of the
// counter meets A's on c.
func scenElectionOverlappingMajorities(opts ...LockOption) scenario {
	return func(s *scen) {
		a, b := s.client("A"), s.client("B")
		a.net((*faults.Proxy).Blackhole, "d", "e")
		b.net((*faults.Proxy).Blackhole, "a", "b")
		got := 0
		for range 3 {
			for _, c := range []*client{a, b} {
				// Each of the three rounds (leadership, term read, term raise) waits a
				// node timeout for the masters it cannot reach: a TTL of a second.
				if h, _ := c.campaign(context.Background(), primElection, c.name, time.Second, 2*time.Second, opts...); h != nil {
					got++
					h.holdFor(0)
				}
			}
		}
		if got < 6 {
			s.violate("only %d of 6 leaderships through the overlapping majorities", got)
		}
		s.net.HealAll()
		s.checkPrimKeys(true)
	}
}

// TestElectionOverlappingMajorities: terms increase across candidates that reach
// different majorities.
func TestElectionOverlappingMajorities(t *testing.T) {
	runSafe(t, scenElectionOverlappingMajorities(), 5)
}

// scenPrimitiveRestart: A takes the primitive through {a,b,c}, master c restarts
// at once (without persistence it forgets A's keys), and B tries through {c,d,e}
// until after A's validity. Without the restart quarantine B gets in while A
// holds (the checker must detect it); with it, c does not vote for B in time.
func scenPrimitiveRestart(kind string, quarantine, keepData bool) scenario {
	return func(s *scen) {
		ctx := context.Background()
		const ttl = time.Second
		a := s.client("A")
		var bopts []Option
		if quarantine {
			bopts = append(bopts, WithRestartQuarantine(ttl+a.m.DriftBudget(ttl)+100*time.Millisecond))
		}
		b := s.client("B", bopts...)
		if quarantine {
			_, _ = b.m.TryAcquire(ctx, "warm-up", ttl)
			for deadline := time.Now().Add(5 * time.Second); len(b.m.Quarantine()) > 0 && time.Now().Before(deadline); {
				time.Sleep(20 * time.Millisecond)
			}
		}
		a.net((*faults.Proxy).Blackhole, "d", "e")
		b.net((*faults.Proxy).Blackhole, "a", "b")
		take := func(c *client, first bool) *primHold {
			switch kind {
			case "semaphore":
				s.rec.Limit(primSem, 1)
				return c.tryPermit(ctx, primSem, 1, ttl, 0)
			case "shared":
				return c.tryShared(ctx, primRW, first, ttl, 0)
			case "multi-name":
				return c.tryMulti(ctx, []string{"prim/a", "prim/b"}, ttl)
			default: // held to the end of its first validity, as the others are
				h, _ := c.campaign(ctx, primElection, c.name, ttl, 2*ttl, WithKeepAlive(KeepAlive{MaxHold: ttl}))
				return h
			}
		}
		var ha *primHold
		for deadline := time.Now().Add(2 * time.Second); ha == nil && time.Now().Before(deadline); {
			ha = take(a, true)
		}
		if ha == nil {
			s.violate("A never took the %s", kind)
			return
		}
		faults.KillRestart(s.server("c"), 0, keepData)
		s.rec.Event("restarted c (keep data %v)", keepData)
		deadline := a.real(ha.l.Until()).Add(500 * time.Millisecond)
		if quarantine {
			deadline = deadline.Add(ttl)
		}
		var hb *primHold
		for hb == nil && time.Now().Before(deadline) {
			hb = take(b, false)
			if hb == nil {
				time.Sleep(time.Duration(1+s.intn(4)) * time.Millisecond)
			}
		}
		if hb != nil {
			hb.holdFor(0)
		} else {
			s.violate("B never took the %s after A's validity", kind)
		}
		<-ha.l.Done()
		ha.holdFor(0)
	}
}

// TestPrimitiveRestartHazard: an immediate restart without persistence breaks
// every primitive as it breaks a lock (detected), and the restart quarantine and
// AOF always protect every primitive as they protect a lock. The quarantine does
// not protect the election's term counter, which has no TTL: the restarted master
// forgot it, and a candidate that reaches only it and the masters that never saw
// the previous term repeats that term (as a fence can repeat: SAFETY.md). Only
// persistence keeps terms increasing through restarts.
func TestPrimitiveRestartHazard(t *testing.T) {
	for _, kind := range []string{"semaphore", "shared", "multi-name", "election"} {
		t.Run(kind+"/detected", func(t *testing.T) { runHazard(t, scenPrimitiveRestart(kind, false, false), 5) })
		t.Run(kind+"/aof_always", func(t *testing.T) { runSafe(t, scenPrimitiveRestart(kind, false, true), 5, aofAlways...) })
		if kind != "election" {
			t.Run(kind+"/restart_quarantine", func(t *testing.T) { runSafe(t, scenPrimitiveRestart(kind, true, false), 5) })
			continue
		}
		t.Run(kind+"/restart_quarantine_keeps_one_leader_not_the_terms", func(t *testing.T) {
			s := newScen(t, mutants{}, 5)
			scenPrimitiveRestart(kind, true, false)(s)
			terms := 0
			for _, v := range s.rec.Violations() {
				if v.Kind == checker.KindTerm {
					terms++
					t.Logf("the documented limit: %s", v.Detail)
					continue
				}
				t.Errorf("%s: %s", v.Kind, v.Detail)
			}
			assert.Equal(t, 1, terms, "the restarted master forgot the term counter (seed %d)", s.rec.Seed)
		})
	}
}

// schedulingLag measures, until ctx ends, how late a 5ms timer of this process
// fires at worst: how late any Done may be seen for reasons outside the library.
func schedulingLag(ctx context.Context) time.Duration {
	var worst time.Duration
	for ctx.Err() == nil {
		t0 := time.Now()
		time.Sleep(5 * time.Millisecond)
		worst = max(worst, time.Since(t0)-5*time.Millisecond)
	}
	return worst
}
