package quorum

import (
	"context"
	"os"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/faults"
)

// The counterexamples of the models in spec/ (scripts/model-check.sh), replayed on
// three real masters with the same fault: each trail shows a violation with the
// assumption the model dropped, and none with it kept. SAFETY.md maps the trails.

// modelTrail is one counterexample check of scripts/model-check.sh and its replay.
type modelTrail struct {
	check  string   // the check's name in scripts/model-check.sh
	broken scenario // the assumption dropped: the checker must see the overlap
	kept   scenario // the assumption kept: safe
}

var modelTrails = []modelTrail{
	// A holds {a, b}, b restarts without persistence, B takes {b, c} inside A's validity.
	{"no_quarantine", scenModelRestart(false), scenModelRestart(true)},
	// A's clock runs 15% slow against a 5% budget: its Until is past its keys' expiry.
	{"clock_beyond_budget", scenClockDriftFactor(0.85, 0.05), scenClockDriftFactor(0.85, 0.25)},
	// A writes after its Until; fencing at the resource refuses it (late_write_fenced).
	{"late_write", scenClientPauseAfter(false), scenClientPauseAfter(true)},
	// A measures elapsed time on a wall clock that steps back during its round.
	{"wall_clock_jump", scenWallClockJump(true), scenWallClockJump(false)},
	// A master evicts A's key (volatile-lru) and B takes {a, b, c}.
	{"eviction", scenEviction("volatile-lru"), scenEviction("noeviction")},
}

// TestModelTrailsReplay runs each counterexample of the models on real masters.
func TestModelTrailsReplay(t *testing.T) {
	for _, tr := range modelTrails {
		t.Run(tr.check+"/assumption dropped", func(t *testing.T) {
			t.Parallel()
			runHazard(t, tr.broken, 3)
		})
		t.Run(tr.check+"/assumption kept", func(t *testing.T) {
			t.Parallel()
			runSafe(t, tr.kept, 3)
		})
	}
}

// TestModelTrailsAreAllReplayed fails when scripts/model-check.sh expects a
// counterexample that no replay covers, or a replay names no such check.
func TestModelTrailsAreAllReplayed(t *testing.T) {
	b, err := os.ReadFile("../scripts/model-check.sh")
	require.NoError(t, err)
	var want []string
	for _, m := range regexp.MustCompile(`(?m)^\s*"(\w+) counterexample `).FindAllStringSubmatch(string(b), -1) {
		want = append(want, m[1])
	}
	var got []string
	for _, tr := range modelTrails {
		got = append(got, tr.check)
	}
	require.ElementsMatch(t, want, got)
}

// scenModelRestart is the no_quarantine trail on masters a, b, c: A (cut off from c)
// takes {a, b}, b restarts at once without its data, B (cut off from a) takes {b, c}
// while A's validity lasts. With the restart quarantine B cannot count b's vote
// until A's keys are gone.
func scenModelRestart(quarantine bool) scenario {
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
			// B meets every master (their run_ids), then waits out the quarantine of
			// brand-new masters.
			_, _ = b.m.TryAcquire(ctx, "warm-up", ttl)
			require.Eventually(s.t, func() bool { return len(b.m.quarantineEnds()) == 0 }, 5*time.Second, 20*time.Millisecond)
		}
		a.net((*faults.Proxy).Blackhole, "c")
		b.net((*faults.Proxy).Blackhole, "a")
		h := a.until(ctx, time.Now().Add(2*time.Second), scenLock, ttl)
		require.NotNil(s.t, h, "A acquires")
		faults.KillRestart(s.server("b"), 0, false)
		s.rec.Event("restarted b without its data")
		deadline := h.c.real(h.l.Until()).Add(500 * time.Millisecond)
		if quarantine {
			deadline = deadline.Add(ttl)
		}
		if bh := b.until(ctx, deadline, scenLock, ttl); bh != nil {
			_ = bh.release(ctx)
		} else {
			s.violate("B never acquired")
		}
		_ = h.release(ctx)
	}
}

// stepClock is a client clock read from the wall clock (wall: no monotonic reading,
// so a step of the wall clock shows in elapsed time) or from the monotonic clock
// (which a step of the wall clock does not move). The wall clock steps by step at
// the first reading made after of real time from the first reading: a step in the
// middle of the round that reads the clock first, whatever the scheduler does.
type stepClock struct {
	wall  bool
	step  time.Duration
	after time.Duration

	mu      sync.Mutex
	first   time.Time
	stepped bool
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if c.first.IsZero() {
		c.first = now
	}
	if now.Sub(c.first) >= c.after {
		c.stepped = true
	}
	if !c.wall {
		return now
	}
	return now.Round(0).Add(c.offset())
}

// offset is how far the clock reads from real time; c.mu is held.
func (c *stepClock) offset() time.Duration {
	if c.wall && c.stepped {
		return c.step
	}
	return 0
}

// Real converts a reading of the clock to the real time at which it shows it.
func (c *stepClock) Real(t time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return t.Add(-c.offset())
}

// scenWallClockJump is the wall_clock_jump trail: A's round takes 200 ms (slow
// replies) and its wall clock steps back 600 ms 75 ms into it; measured on the wall
// clock, the round looks to have taken no time and A's Until is 600 ms late in real
// time, past its keys' expiry: B takes the lock inside A's validity. On the
// monotonic clock the step changes nothing.
func scenWallClockJump(wall bool) scenario {
	return func(s *scen) {
		ctx := context.Background()
		const ttl = time.Second
		clk := &stepClock{wall: wall, step: -600 * time.Millisecond, after: 75 * time.Millisecond}
		a := s.client("A", WithClock(clk), WithNodeTimeout(time.Second))
		b := s.client("B")
		a.net(func(p *faults.Proxy) { p.SetLatency(0, 200*time.Millisecond) })
		h, err := a.try(ctx, scenLock, ttl)
		require.NoError(s.t, err, "A acquires")
		s.rec.Event("A's wall clock stepped back 600ms during its round")
		a.net((*faults.Proxy).Heal)
		if bh := b.until(ctx, h.c.real(h.l.Until()).Add(100*time.Millisecond), scenLock, ttl); bh != nil {
			_ = bh.release(ctx)
		}
		h.holdToEnd(ctx)
	}
}
