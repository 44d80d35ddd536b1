package quorum

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

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
	got := w.run(ctx, s, cls, opts)
	wg.Wait()
	s.net.HealAll()
	// Quiescence: late commands expire, and so do the waiters' markers whose
	// clean-up a fault kept from a master (an exclusive waiter's NAME:xwait, a
	// waiter's entry in NAME:queue: they live at most the heartbeat TTL).
	time.Sleep(max(primTTL, cls[0].m.heartbeatTTL()) + 150*time.Millisecond)
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
//
// The primitives run two at a time (t.Parallel, -parallel being the processors'
// count): each run is bound by its wall time (the faults' and the nemesis'
// lengths), and one at a time took 103 s of the CI's race step.
func TestPrimitiveScenarios(t *testing.T) {
	for _, w := range primWorkloads {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
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
	if d, ok := soakEnv(t); ok {
		return d
	}
	return 5 * time.Second
}
