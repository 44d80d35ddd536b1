package quorum

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/faults"
	"github.com/redlock/redlock/quorum/observe"
)

// Attacks on rounds that end at a quorum: the masters beyond the quorum slow,
// stalling, or slow on exactly a quorum, with the checker watching.

// A master answering just later than the round waits for it after a quorum
// (6 ms for every client) and another at the edge (3 ms): every acquisition
// abandons one or two masters that then run its SET. Nothing overlaps and
// nothing is left once the clients stopped.
func scenAQSlowMinority(s *scen) {
	cls := []*client{s.client("A"), s.client("B"), s.client("C"), s.client("D")}
	for _, c := range cls {
		c.net(func(p *faults.Proxy) { p.SetLatency(3*time.Millisecond, 3*time.Millisecond) }, "e")
		c.net(func(p *faults.Proxy) { p.SetLatency(1500*time.Microsecond, 1500*time.Microsecond) }, "d")
	}
	got := workers(1500*time.Millisecond, scenLock, 200*time.Millisecond, 2*time.Millisecond, cls...)
	if sum(got) < 10 {
		s.violate("only %d acquisitions with two slow masters", sum(got))
	}
	s.quiesce(200 * time.Millisecond)
}

// A master stopped and resumed again and again (30 ms each) during contention.
func scenAQStallingMaster(s *scen) {
	cls := []*client{s.client("A"), s.client("B"), s.client("C")}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			s.server("b").Stop()
			time.Sleep(time.Duration(10+s.intn(30)) * time.Millisecond)
			s.server("b").Cont()
			time.Sleep(time.Duration(10+s.intn(30)) * time.Millisecond)
		}
	})
	got := workers(1500*time.Millisecond, scenLock, 200*time.Millisecond, 2*time.Millisecond, cls...)
	close(stop)
	wg.Wait()
	s.server("b").Cont()
	if sum(got) < 10 {
		s.violate("only %d acquisitions with a stalling master", sum(got))
	}
	s.quiesce(200 * time.Millisecond)
}

// Latency on exactly a quorum for one client, a fast rival: the slow client's
// quorum takes a third of the TTL; its validity counts from the round's start.
func scenAQSlowExactQuorum(s *scen) {
	const ttl = 150 * time.Millisecond
	a := s.client("A", WithNodeTimeout(120*time.Millisecond))
	b := s.client("B")
	a.net(func(p *faults.Proxy) { p.SetLatency(25*time.Millisecond, 25*time.Millisecond) }, "a", "b", "c")
	a.net(func(p *faults.Proxy) { p.Blackhole() }, "e")
	ctx := context.Background()
	for range 5 {
		h, err := a.try(ctx, scenLock, ttl)
		if err == nil {
			if bh := b.until(ctx, time.Now().Add(2*ttl), scenLock, ttl); bh != nil {
				_ = bh.release(ctx)
			}
			h.holdToEnd(ctx)
		}
	}
}

func TestAttackAtQuorumScenarios(t *testing.T) {
	tests := []struct {
		name string
		fn   scenario
	}{
		{"slow minority beyond the grace", scenAQSlowMinority},
		{"stalling master", scenAQStallingMaster},
		{"latency on exactly a quorum", scenAQSlowExactQuorum},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runSafe(t, tt.fn, 5)
		})
	}
}

// TestBugFairHandoffBesideAStoppedMasterWaitsOutASplitRound: a fair waiter B
// woken by the holder's release while master 4 of 5 is stopped takes the lock a
// few milliseconds later in most runs, but two node timeouts later in some: its
// round reaches two masters before the release does (refused there), is granted
// by two, so no quorum granted and the round waits the whole node timeout for the
// stopped master (even when one granted and three refused, so that no quorum
// could be granted any more); its unwind then waits it out again. Every run: B
// takes the lock within half the node timeout, and once master 4 resumes no
// queue entry or key is left.
func TestBugFairHandoffBesideAStoppedMasterWaitsOutASplitRound(t *testing.T) {
	t.Skip("a fair round with a split vote (2 granted, 2 refused, 1 stopped) waits the node timeout for the stopped master, and its unwind again: no small fix (see the report)")
	const timeout = time.Second
	for run := range 20 {
		c, a := testCluster(t, 5, WithNodeTimeout(timeout))
		ob := &roundLog{}
		b := managerFor(t, c, append(waiterOpts(), WithObserver(ob))...)
		ctx := context.Background()
		held, err := a.Acquire(ctx, "chain", 10*time.Second, WithFair())
		require.NoError(t, err)
		gotB := make(chan *Lock, 1)
		go func() {
			l, err := b.Acquire(ctx, "chain", 10*time.Second, WithFair())
			assert.NoError(t, err)
			gotB <- l
		}()
		require.Eventually(t, func() bool { return len(queueOn(t, c, "lock:chain")) == 5 }, 5*time.Second, 2*time.Millisecond)
		c.Servers[4].Stop()
		relA := make(chan error, 1)
		t0 := time.Now()
		ob.reset()
		go func() { relA <- held.Release(ctx) }()
		lb := <-gotB
		took := time.Since(t0)
		c.Servers[4].Cont()
		require.NotNil(t, lb)
		stalled := !assert.Less(t, took, timeout/2, "run %d: B's handoff beside a stopped master", run)
		if stalled {
			t.Logf("B's master answers: %s", ob.String())
		}
		<-relA
		require.NoError(t, lb.Release(ctx))
		if stalled {
			continue // master 4 was stopped longer than the node timeout: A's copy there expires with its TTL
		}
		assert.Eventually(t, func() bool {
			return len(queueOn(t, c, "lock:chain")) == 0 && len(nonEmpty(keysOn(t, c, "lock:chain"))) == 0
		}, 3*time.Second, 10*time.Millisecond, "run %d: nothing left", run)
	}
}

// roundLog records a Manager's master answers.
type roundLog struct {
	mu  sync.Mutex
	evs []string
	t0  time.Time
}

func (o *roundLog) Observe(e observe.Event) {
	if e.Kind != observe.EventMasterRound {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.evs = append(o.evs, fmt.Sprintf("[%v %s %s %s %v]", time.Since(o.t0).Round(time.Millisecond), e.Op, e.Master, e.Outcome, e.Latency.Round(time.Millisecond)))
}

func (o *roundLog) reset() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.evs, o.t0 = nil, time.Now()
}

func (o *roundLog) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return strings.Join(o.evs, " ")
}
