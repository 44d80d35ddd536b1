package quorum

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/faults"
)

const scenLock = "scenario/resource"

// Baseline contention: four clients take one lock again and again.
func scenBaseline(s *scen) {
	cls := []*client{s.client("A"), s.client("B"), s.client("C"), s.client("D")}
	got := workers(1200*time.Millisecond, scenLock, 500*time.Millisecond, 3*time.Millisecond, cls...)
	if sum(got) < 10 {
		s.violate("only %d acquisitions under contention", sum(got))
	}
	s.checkKeys(true)
}

// Two of five masters killed during contention: still safe and available.
func scenKillTwo(s *scen) {
	cls := []*client{s.client("A"), s.client("B"), s.client("C")}
	go func() {
		time.Sleep(300 * time.Millisecond)
		s.server("b").Kill()
		s.server("d").Kill()
		s.rec.Event("killed b and d")
	}()
	got := workers(1200*time.Millisecond, scenLock, 500*time.Millisecond, 3*time.Millisecond, cls...)
	if sum(got) < 3 {
		s.violate("only %d acquisitions with 2 of 5 masters down", sum(got))
	}
	after := workers(300*time.Millisecond, scenLock, 500*time.Millisecond, 3*time.Millisecond, cls...)
	if sum(after) == 0 {
		s.violate("no acquisition after 2 of 5 masters died")
	}
	s.checkKeys(true, "a", "c", "e")
}

// Three of five killed: a clean ErrNotAcquired naming the dead masters, fast.
func scenKillThree(s *scen) {
	a := s.client("A")
	for _, n := range []string{"c", "d", "e"} {
		s.server(n).Kill()
	}
	t0 := time.Now()
	_, err := a.try(context.Background(), scenLock, 500*time.Millisecond)
	el := time.Since(t0)
	switch {
	case err == nil:
		s.violate("acquired with 3 of 5 masters dead")
	case !errors.Is(err, ErrNotAcquired) || !errors.Is(err, ErrUnavailable):
		s.violate("want ErrNotAcquired and ErrUnavailable, got %v", err)
	case !strings.Contains(err.Error(), "master c") && !strings.Contains(err.Error(), "c ("):
		s.violate("error does not name the dead masters: %v", err)
	}
	if el > 500*time.Millisecond {
		s.violate("failing took %v (bound 500ms)", el)
	}
	s.checkKeys(true, "a", "b")
}

// A client cut off from three masters fails fast and releases its partial keys.
func scenPartitionThree(s *scen) {
	a := s.client("A")
	a.net((*faults.Proxy).Blackhole, "c", "d", "e")
	t0 := time.Now()
	_, err := a.try(context.Background(), scenLock, time.Second)
	if el := time.Since(t0); el > 400*time.Millisecond {
		s.violate("failing took %v (node timeout 50ms, bound 400ms)", el)
	}
	if !errors.Is(err, ErrNotAcquired) {
		s.violate("want ErrNotAcquired, got %v", err)
	}
	s.checkKeys(true, "a", "b")
}

// The holder is partitioned after acquiring: B gets the lock only after A's validity.
func scenHolderPartitioned(s *scen) {
	ctx := context.Background()
	a, b := s.client("A"), s.client("B")
	h := a.until(ctx, time.Now().Add(2*time.Second), scenLock, 500*time.Millisecond)
	require.NotNil(s.t, h)
	a.net((*faults.Proxy).Blackhole)
	bh := b.until(ctx, time.Now().Add(time.Second), scenLock, 500*time.Millisecond)
	if bh == nil {
		s.violate("B never acquired after A's validity")
		return
	}
	_ = bh.release(ctx)
	_ = h.release(ctx)
	s.checkKeys(true)
}

// Overlapping majorities: A reaches {a,b,c}, B reaches {c,d,e}.
func scenOverlappingMajorities(s *scen) {
	a, b := s.client("A"), s.client("B")
	a.net((*faults.Proxy).Blackhole, "d", "e")
	b.net((*faults.Proxy).Blackhole, "a", "b")
	got := workers(time.Second, scenLock, 300*time.Millisecond, 5*time.Millisecond, a, b)
	if sum(got) == 0 {
		s.violate("no acquisition through the shared master")
	}
	s.checkKeys(false)
}

// Lost replies: A's commands to c and d are applied but never answered.
func scenLostReplies(s *scen) {
	a, b, c := s.client("A"), s.client("B"), s.client("C")
	a.net((*faults.Proxy).LoseReplies, "c", "d")
	b.net((*faults.Proxy).LoseReplies, "e")
	workers(time.Second, scenLock, 300*time.Millisecond, 3*time.Millisecond, a, b, c)
	// Releases were applied, though never acknowledged; a release that timed out
	// leaves a key only until its TTL.
	time.Sleep(350 * time.Millisecond)
	s.checkKeys(true)
}

// dial opens c's connections to every master (a round on another name, released)
// before a scenario slows them down: the first round through 45 ms of latency each
// way would otherwise pay two round trips, the handshake's and the command's, 180
// ms of a 250 ms node timeout, which the race detector and a loaded machine overran
// ("A did not acquire with 3 slow masters", twice in a row).
func (c *client) dial(ctx context.Context) {
	if l, err := c.m.TryAcquire(ctx, "dial", time.Minute); err == nil {
		_ = l.Release(ctx)
	}
}

// Slow masters, 0.3 x TTL on two: A still acquires, with a validity that
// accounts for the latency, and B cannot overlap it.
func scenSlowTwo(s *scen) {
	ctx := context.Background()
	const ttl = 300 * time.Millisecond
	a := s.client("A", WithNodeTimeout(250*time.Millisecond))
	b := s.client("B")
	a.dial(ctx)
	a.net(func(p *faults.Proxy) { p.SetLatency(45*time.Millisecond, 45*time.Millisecond) }, "a", "b")
	h, err := a.try(ctx, scenLock, ttl)
	if err != nil {
		s.violate("A did not acquire with 2 slow masters: %v", err)
		return
	}
	// A holds to the end of its validity; B polls.
	if bh := b.until(ctx, time.Now().Add(2*ttl), scenLock, ttl); bh != nil {
		_ = bh.release(ctx)
	}
	h.holdToEnd(ctx)
}

// Slow masters, 0.3 TTL on three, a quorum: the round waits that long for its
// quorum (a round that a quorum granted does not wait for two slow masters), and
// the holder's validity counts from the round's start, so B's acquisition after
// the keys expired never overlaps A's hold.
func scenSlowQuorum(s *scen) {
	ctx := context.Background()
	const ttl = 300 * time.Millisecond
	a := s.client("A", WithNodeTimeout(250*time.Millisecond))
	b := s.client("B")
	a.dial(ctx)
	a.net(func(p *faults.Proxy) { p.SetLatency(45*time.Millisecond, 45*time.Millisecond) }, "c", "d", "e")
	h, err := a.try(ctx, scenLock, ttl)
	if err != nil {
		s.violate("A did not acquire with 3 slow masters: %v", err)
		return
	}
	if bh := b.until(ctx, time.Now().Add(2*ttl), scenLock, ttl); bh != nil {
		_ = bh.release(ctx)
	}
	h.holdToEnd(ctx)
}

// Slow masters, >= TTL on three: the round comes back with no validity left.
func scenSlowThree(s *scen) {
	ctx := context.Background()
	const ttl = 300 * time.Millisecond
	a := s.client("A", WithNodeTimeout(time.Second))
	b := s.client("B")
	a.net(func(p *faults.Proxy) { p.SetLatency(ttl/2, ttl/2) }, "c", "d", "e")
	if h, err := a.try(ctx, scenLock, ttl); err == nil {
		if bh := b.until(ctx, time.Now().Add(3*ttl), scenLock, ttl); bh != nil {
			_ = bh.release(ctx)
		}
		_ = h.release(ctx)
		s.violate("A acquired although the round took longer than the TTL")
		return
	} else if !errors.Is(err, ErrTooSlow) {
		s.violate("want ErrTooSlow, got %v", err)
	}
	time.Sleep(ttl) // the release runs through the same latency
	s.checkKeys(true)
}

// A master paused (SIGSTOP) longer than the TTL during contention, then resumed:
// the commands queued on it run late, and the failed rounds' releases follow them.
func scenPausedMaster(s *scen) {
	cls := []*client{s.client("A"), s.client("B"), s.client("C")}
	go func() {
		time.Sleep(200 * time.Millisecond)
		s.rec.Event("pause c")
		faults.Pause(s.server("c"), 600*time.Millisecond)
		s.rec.Event("resume c")
	}()
	got := workers(1300*time.Millisecond, scenLock, 300*time.Millisecond, 3*time.Millisecond, cls...)
	if sum(got) < 5 {
		s.violate("only %d acquisitions with one master paused", sum(got))
	}
	// Commands queued on the paused master ran late, with their TTL counted from then.
	time.Sleep(350 * time.Millisecond)
	s.checkKeys(true)
}

// Extend and release edge cases: invalid TTLs never touch the key; extend after
// expiry fails without I/O; a late release and a foreign-token extend or release
// never touch the next owner's key; release twice is fine.
func scenEdgeCases(s *scen) {
	ctx := context.Background()
	const ttl = 300 * time.Millisecond
	a, b, admin := s.client("A"), s.client("B"), s.client("admin")
	h := a.until(ctx, time.Now().Add(2*time.Second), scenLock, ttl)
	require.NotNil(s.t, h)
	for _, bad := range []time.Duration{0, -time.Second, time.Hour} {
		s.foreignCheck(h.l.Key(), h.l.Token(), func() {
			if err := h.extend(ctx, bad); !errors.Is(err, ErrInvalidArgument) {
				s.violate("extend with ttl %v: want ErrInvalidArgument, got %v", bad, err)
			}
		})
		if _, _, err := a.m.extendToken(ctx, scenLock, h.l.Token(), bad); !errors.Is(err, ErrInvalidArgument) {
			s.violate("ExtendToken with ttl %v: want ErrInvalidArgument, got %v", bad, err)
		}
	}
	// B must not get in while A holds.
	if bh, err := b.try(ctx, scenLock, ttl); err == nil {
		_ = bh.release(ctx)
	}
	// A outlives its validity; B takes over; A's late extend and release must not
	// touch B's keys.
	time.Sleep(time.Until(h.l.Until()))
	bh := b.until(ctx, time.Now().Add(time.Second), scenLock, ttl)
	if bh == nil {
		// A's keys outlive its validity: an out-of-range TTL reached the masters.
		s.violate("B cannot take the lock within 1s after A's validity ended (keys %v)", s.values(h.l.Key()))
		return
	}
	s.foreignCheck(bh.l.Key(), bh.l.Token(), func() {
		if err := h.extend(ctx, ttl); !errors.Is(err, ErrLost) {
			s.violate("extend after expiry: want ErrLost, got %v", err)
		}
		_ = h.release(ctx)
		if err := h.release(ctx); err != nil {
			s.violate("second release: %v", err)
		}
		_, _ = a.m.releaseToken(ctx, scenLock, h.l.Token())
	})
	// An admin force-expires B's lock while B holds it; C takes it; B's extend
	// must not come back to life on C's keys.
	bh.h.Released(time.Now()) // the admin broke B's hold here
	require.NoError(s.t, unstalled(func() error {
		_, err := admin.m.forceExpire(ctx, scenLock, "")
		return err
	}))
	var ch *held
	require.NoError(s.t, unstalled(func() (err error) {
		ch, err = admin.try(ctx, scenLock, ttl)
		return err
	}))
	s.foreignCheck(ch.l.Key(), ch.l.Token(), func() {
		if err := bh.l.Extend(ctx, ttl); !errors.Is(err, ErrLost) {
			s.violate("extend of a force-expired lock now held by another: want ErrLost, got %v", err)
		}
	})
	_ = ch.release(ctx)
	_ = bh.l.Release(ctx)
	s.checkKeys(true)
}

// Script cache flush: EVALSHA falls back to EVAL; extend and release still work.
func scenScriptFlush(s *scen) {
	ctx := context.Background()
	a := s.client("A")
	h := a.until(ctx, time.Now().Add(2*time.Second), scenLock, time.Second)
	require.NotNil(s.t, h)
	for _, sv := range s.c.Servers {
		require.NoError(s.t, sv.Client().ScriptFlush(ctx).Err())
	}
	if err := h.extend(ctx, time.Second); err != nil {
		s.violate("extend after SCRIPT FLUSH: %v", err)
	}
	if err := h.release(ctx); err != nil {
		s.violate("release after SCRIPT FLUSH: %v", err)
	}
	s.checkKeys(true)
}

var aofAlways = []string{"--appendonly", "yes", "--appendfsync", "always"}

// TestScenarios runs every scenario that must stay safe (the mitigations of the
// hazards outside Redlock's model are in TestHazardsAreMitigated).
func TestScenarios(t *testing.T) {
	tests := []struct {
		name string
		fn   scenario
		args []string
	}{
		{"baseline contention", scenBaseline, nil},
		{"2 of 5 killed during contention", scenKillTwo, nil},
		{"3 of 5 killed", scenKillThree, nil},
		{"client partitioned from 3 masters", scenPartitionThree, nil},
		{"holder partitioned after acquiring", scenHolderPartitioned, nil},
		{"overlapping majorities", scenOverlappingMajorities, nil},
		{"lost replies", scenLostReplies, nil},
		{"slow masters 0.3 ttl on 2", scenSlowTwo, nil},
		{"slow masters ttl on 3", scenSlowThree, nil},
		{"slow masters 0.3 ttl on 3", scenSlowQuorum, nil},
		{"master paused longer than ttl", scenPausedMaster, nil},
		{"client pause during acquire", scenClientPauseDuring, nil},
		{"client clock drift within budget", scenClockDrift(0.97), nil},
		{"extend and release edge cases", scenEdgeCases, nil},
		{"script cache flush", scenScriptFlush, nil},
		{"rival polls while the holder waits for Done", scenRivalPolls, nil},
		{"keep-alive extension in flight at expiry", scenKeepAliveInFlightAtExpiry, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			runSafe(t, tt.fn, 5, tt.args...)
		})
	}
}
