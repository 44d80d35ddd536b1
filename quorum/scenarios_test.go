package quorum

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/faults"
	"github.com/redlock/redlock/internal/redistest"
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

// restartVariant is how a holder master comes back.
type restartVariant struct {
	delay      time.Duration
	keepData   bool
	quarantine bool
}

// Holder master restart: A holds {a,b,c} (cut off from d, e), master c restarts,
// then B (cut off from a, b) tries to take {c,d,e} until after A's validity.
func scenRestart(v restartVariant) scenario {
	return func(s *scen) {
		ctx := context.Background()
		const ttl = time.Second
		a := s.client("A")
		var bopts []Option
		if v.quarantine {
			bopts = append(bopts, WithRestartQuarantine(ttl+a.m.DriftBudget(ttl)+100*time.Millisecond))
		}
		b := s.client("B", bopts...)
		if v.quarantine {
			// B meets every master (learning its run_id), then waits out the quarantine
			// of brand-new masters.
			_, _ = b.m.TryAcquire(ctx, "warm-up", ttl)
			require.Eventually(s.t, func() bool { return len(b.m.Quarantine()) == 0 }, 5*time.Second, 20*time.Millisecond)
		}
		a.net((*faults.Proxy).Blackhole, "d", "e")
		b.net((*faults.Proxy).Blackhole, "a", "b")
		h := a.until(ctx, time.Now().Add(2*time.Second), scenLock, ttl)
		require.NotNil(s.t, h, "A acquires")
		faults.KillRestart(s.server("c"), v.delay, v.keepData)
		s.rec.Event("restarted c (delay %v, keep data %v)", v.delay, v.keepData)
		deadline := h.c.real(h.l.Until())
		if now := time.Now(); now.After(deadline) {
			deadline = now
		}
		deadline = deadline.Add(500 * time.Millisecond)
		if v.quarantine {
			deadline = deadline.Add(ttl)
		}
		if bh := b.until(ctx, deadline, scenLock, ttl); bh != nil {
			_ = bh.release(ctx)
		} else {
			s.violate("B never acquired after A's validity")
		}
		_ = h.release(ctx)
	}
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

// Slow masters, 0.3 x TTL on two: A still acquires, with a validity that
// accounts for the latency, and B cannot overlap it.
func scenSlowTwo(s *scen) {
	ctx := context.Background()
	const ttl = 300 * time.Millisecond
	a := s.client("A", WithNodeTimeout(250*time.Millisecond))
	b := s.client("B")
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

// fencedStore is a resource that accepts a write only with a fence at least the
// highest it has seen: what a fencing token buys.
type fencedStore struct {
	mu       sync.Mutex
	highest  int64
	rejected int
}

func (f *fencedStore) write(fence int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fence < f.highest {
		f.rejected++
		return fmt.Errorf("stale fence %d < %d", fence, f.highest)
	}
	f.highest = fence
	return nil
}

// Client pause after acquiring, past the validity: A keeps using the lock after
// its Until (as a paused process would). Without fencing the checker sees the
// overlap; with fencing the resource refuses A's late write.
func scenClientPauseAfter(fencing bool) scenario {
	return func(s *scen) {
		ctx := context.Background()
		const ttl = 300 * time.Millisecond
		a, b := s.client("A"), s.client("B")
		var opts []LockOption
		if fencing {
			opts = append(opts, WithFencing())
		}
		store := &fencedStore{}
		h := a.until(ctx, time.Now().Add(2*time.Second), scenLock, ttl, opts...)
		require.NotNil(s.t, h)
		require.NoError(s.t, store.write(h.l.Fence()))
		// The pause: A believes it holds the lock until it wakes and writes. Without
		// fencing, record it so; with fencing, the store is the judge.
		s.rec.Event("A paused")
		paused := time.Now()
		bh := b.until(ctx, time.Now().Add(2*ttl), scenLock, ttl, opts...)
		require.NotNil(s.t, bh, "B acquires after A's keys expired")
		require.NoError(s.t, store.write(bh.l.Fence()))
		time.Sleep(20 * time.Millisecond)
		werr := store.write(h.l.Fence()) // A wakes and writes
		if !fencing {
			s.rec.Acquired("A", scenLock, paused, time.Now())
		}
		_ = bh.release(ctx)
		_ = h.release(ctx)
		if fencing {
			if werr == nil {
				s.violate("the fenced resource accepted the paused holder's write")
			}
			require.Greater(s.t, bh.l.Fence(), h.l.Fence())
		}
	}
}

// Client pause during acquire: the replies come back after the TTL (the process
// was frozen mid-round); the round must not yield a lock.
func scenClientPauseDuring(s *scen) {
	const ttl = 200 * time.Millisecond
	a := s.client("A", WithNodeTimeout(time.Second))
	a.net(func(p *faults.Proxy) { p.SetLatency(0, ttl+50*time.Millisecond) })
	if h, err := a.try(context.Background(), scenLock, ttl); err == nil {
		_ = h.release(context.Background())
		s.violate("acquired although the client was frozen past the TTL during the round")
	}
}

// Client clock drift: A's clock runs at rate (slow clocks overstate validity). A
// holds to its Until; B polls. Within the budget (factor 0.05) it is safe.
func scenClockDrift(rate float64) scenario { return scenClockDriftFactor(rate, 0.05) }

// scenClockDriftFactor is the drift scenario with both clients configured with the
// given drift factor: safe when factor covers the rate error (1-rate), because A's
// validity, stretched by its slow clock, still ends before its keys expire.
func scenClockDriftFactor(rate, factor float64) scenario {
	return func(s *scen) {
		ctx := context.Background()
		const ttl = time.Second
		a := s.client("A", WithClock(faults.NewDriftClock(rate)), WithDrift(factor, 2*time.Millisecond))
		b := s.client("B", WithDrift(factor, 2*time.Millisecond))
		h := a.until(ctx, time.Now().Add(2*time.Second), scenLock, ttl)
		require.NotNil(s.t, h)
		if bh := b.until(ctx, h.c.real(h.l.Until()).Add(100*time.Millisecond), scenLock, ttl); bh != nil {
			_ = bh.release(ctx)
		}
		h.holdToEnd(ctx)
	}
}

// Server clock jump: the PTTL of lock keys on three masters moves 400ms sooner (a
// wall clock jumped forward there): beyond the drift budget, B can take the lock
// inside A's validity. With fencing, the locks still overlap, but once B has
// written to the resource it refuses A's write, made inside A's validity.
func scenServerClockJump(fencing bool) scenario {
	return func(s *scen) {
		ctx := context.Background()
		const ttl = time.Second
		a, b := s.client("A"), s.client("B")
		var opts []LockOption
		if fencing {
			opts = append(opts, WithFencing())
		}
		store := &fencedStore{}
		h := a.until(ctx, time.Now().Add(2*time.Second), scenLock, ttl, opts...)
		require.NotNil(s.t, h)
		require.NoError(s.t, store.write(h.l.Fence()))
		for _, n := range []string{"a", "b", "c"} {
			_, err := faults.ShiftClock(ctx, s.server(n), DefaultKeyPrefix+"*", -400*time.Millisecond)
			require.NoError(s.t, err)
		}
		s.rec.Event("wall clocks of a, b, c jumped 400ms forward")
		bh := b.until(ctx, h.c.real(h.l.Until()), scenLock, ttl, opts...)
		if fencing {
			switch {
			case bh == nil:
				s.violate("B never got in during A's validity: the clock jump did not strike")
			case store.write(bh.l.Fence()) != nil:
				s.violate("the resource refused the new holder B (fence %d after %d)", bh.l.Fence(), h.l.Fence())
			case !time.Now().Before(h.c.real(h.l.Until())):
				s.violate("A's validity ended before it could write: the overlap was not exercised")
			case store.write(h.l.Fence()) == nil: // A, inside its validity, writes
				s.violate("the fenced resource accepted the stale holder's write (fence %d after %d)", h.l.Fence(), bh.l.Fence())
			}
		}
		if bh != nil {
			_ = bh.release(ctx)
		}
		h.holdToEnd(ctx)
	}
}

// Eviction: memory pressure on three masters with maxmemory-policy volatile-lru
// evicts A's key (the only volatile one) and B takes the lock inside A's
// validity. Under noeviction the filler writes fail instead and A's keys survive.
func scenEviction(policy string) scenario {
	return func(s *scen) {
		ctx := context.Background()
		const ttl = 2 * time.Second
		a, b := s.client("A"), s.client("B")
		h := a.until(ctx, time.Now().Add(2*time.Second), scenLock, ttl)
		require.NotNil(s.t, h)
		for _, n := range []string{"a", "b", "c"} {
			sv := s.server(n)
			cl := sv.Client()
			require.NoError(s.t, faults.SetConfig(ctx, sv, "maxmemory-policy", policy))
			used := cl.MemoryUsage(ctx, h.l.Key()).Val()
			_ = used
			info := cl.Info(ctx, "memory").Val()
			require.NoError(s.t, faults.SetConfig(ctx, sv, "maxmemory", fmt.Sprint(usedMemory(info)+256<<10)))
			big := strings.Repeat("x", 4<<10)
			for i := 0; i < 400; i++ {
				if cl.Set(ctx, fmt.Sprintf("filler:%d", i), big, 0).Err() != nil || cl.Exists(ctx, h.l.Key()).Val() == 0 {
					break
				}
			}
			require.NoError(s.t, faults.SetConfig(ctx, sv, "maxmemory", "0")) // the pressure passes
			cl.Del(ctx, "filler:*")
		}
		s.rec.Event("memory pressure on a, b, c under %s", policy)
		if bh := b.until(ctx, h.c.real(h.l.Until()), scenLock, ttl); bh != nil {
			_ = bh.release(ctx)
		}
		h.holdToEnd(ctx)
	}
}

func usedMemory(info string) int64 {
	var n int64
	_, _ = fmt.Sscan(infoField(info, "used_memory"), &n)
	return n
}

// Replica promotion: master c has a replica, and asynchronous replication loses
// A's lock write on the way to it (the replication link goes through a proxy that
// drops it; a SIGSTOPped replica would not do: the write already sits in its
// socket buffer and is applied when it resumes). c dies, the replica is promoted
// with REPLICAOF NO ONE, and the address the clients use for c now reaches the
// replica, as a virtual IP or Sentinel-driven DNS would. B, cut off from a and b,
// then tries {c,d,e}. Without restart quarantine the promoted replica votes for B
// inside A's validity. With it, B's new connection to c sees another run_id on the
// same address and c does not vote until the quarantine ends.
func scenReplicaPromotion(quarantine bool) scenario {
	return func(s *scen) {
		ctx := context.Background()
		const ttl = 2 * time.Second
		window := ttl + 100*time.Millisecond
		master := s.server("c")
		require.NoError(s.t, faults.SetConfig(ctx, master, "repl-diskless-sync-delay", "0"))
		link := s.net.Proxy("replication", "c", master.Addr())
		host, port, err := net.SplitHostPort(link.Addr())
		require.NoError(s.t, err)
		replica := redistest.StartOne(s.t, "c-replica", redistest.Options{Args: []string{"--replicaof", host, port}})
		rcl := replica.Client()
		// Replication works before the fault: a write on c reaches the replica.
		require.NoError(s.t, master.Client().Set(ctx, "replication-probe", "1", 0).Err())
		require.Eventually(s.t, func() bool { return rcl.Get(ctx, "replication-probe").Val() == "1" },
			10*time.Second, 10*time.Millisecond, "the replica syncs with c")

		a := s.client("A")
		q := window + a.m.DriftBudget(ttl)
		var bopts []Option
		if quarantine {
			bopts = append(bopts, WithRestartQuarantine(q))
		}
		b := s.client("B", bopts...)
		if quarantine {
			// B meets every master (learning c's run_id) and waits out the quarantine
			// of brand-new masters. The replica must be older than the quarantine
			// window by the failover, so that only the run_id change can quarantine it.
			require.Eventually(s.t, func() bool {
				if !b.m.metEvery() {
					if wl, err := b.m.TryAcquire(ctx, "warm-up", ttl); err == nil {
						_ = wl.Release(ctx)
					}
					return false
				}
				up, _ := strconv.Atoi(infoField(rcl.Info(ctx, "server").Val(), "uptime_in_seconds"))
				return len(b.m.Quarantine()) == 0 && time.Duration(up)*time.Second > q
			}, 20*time.Second, 20*time.Millisecond, "B met every master and their quarantine ended")
		}
		a.net((*faults.Proxy).Blackhole, "d", "e")
		b.net((*faults.Proxy).Blackhole, "a", "b")
		link.Blackhole()
		s.rec.Event("replication link c -> replica drops everything")
		h := a.until(ctx, time.Now().Add(2*time.Second), scenLock, ttl)
		require.NotNil(s.t, h, "A acquires on a, b, c")
		require.Equal(s.t, int64(1), master.Client().Exists(ctx, h.l.Key()).Val(), "c granted A's lock")

		// Fail over: c dies, its replica is promoted, c's address now reaches it.
		master.Kill()
		require.NoError(s.t, rcl.Do(ctx, "REPLICAOF", "NO", "ONE").Err())
		for _, cl := range []string{"A", "B"} {
			s.net.Each(cl, func(p *faults.Proxy) { p.SetUpstream(replica.Addr()) }, "c")
		}
		s.rec.Event("c failed over to its replica")
		require.Zero(s.t, rcl.Exists(ctx, h.l.Key()).Val(), "the promoted replica lacks A's key")

		deadline := h.c.real(h.l.Until()).Add(500 * time.Millisecond)
		if quarantine {
			deadline = deadline.Add(window)
			// B's next rounds reconnect to c and see the replica's run_id (a round
			// may first meet a connection the failover closed).
			seen := false
			for end := time.Now().Add(3 * time.Second); !seen && time.Now().Before(end); {
				if bh, err := b.try(ctx, scenLock, ttl); err == nil {
					_ = bh.release(ctx)
				}
				_, seen = b.m.Quarantine()["c"]
			}
			if !seen {
				s.violate("B did not quarantine c after it failed over to a server with another run_id")
			}
		}
		if bh := b.until(ctx, deadline, scenLock, ttl); bh != nil {
			time.Sleep(50 * time.Millisecond) // B uses the lock
			_ = bh.release(ctx)
		} else {
			s.violate("B never acquired after A's validity")
		}
		_ = h.release(ctx)
		s.checkKeys(true, "a", "b", "d", "e")
		s.checkKeysOn("c (promoted replica)", rcl, true)
	}
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
			if err := h.extend(ctx, bad); !errors.Is(err, ErrInvalidTTL) {
				s.violate("extend with ttl %v: want ErrInvalidTTL, got %v", bad, err)
			}
		})
		if _, _, err := a.m.ExtendToken(ctx, scenLock, h.l.Token(), bad); !errors.Is(err, ErrInvalidTTL) {
			s.violate("ExtendToken with ttl %v: want ErrInvalidTTL, got %v", bad, err)
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
		_, _ = a.m.ReleaseToken(ctx, scenLock, h.l.Token())
	})
	// An admin force-expires B's lock while B holds it; C takes it; B's extend
	// must not come back to life on C's keys.
	bh.h.Released(time.Now()) // the admin broke B's hold here
	_, ferr := admin.m.ForceExpire(ctx, scenLock, "")
	require.NoError(s.t, ferr)
	ch, err := admin.try(ctx, scenLock, ttl)
	require.NoError(s.t, err)
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

// hazard is a fault outside Redlock's model, run without its mitigations, and the
// mitigations that remove its harm.
type hazard struct {
	name        string
	fn          scenario
	mitigations []mitigation
}

// mitigation is a hazard's scenario run with one mitigation on.
type mitigation struct {
	name string
	fn   scenario
	args []string
	// fenced: the locks still overlap, and the fenced resource refuses the stale
	// holder (runFenced); otherwise the run must be safe (runSafe).
	fenced bool
}

var hazards = []hazard{
	{"immediate restart without persistence", scenRestart(restartVariant{}), []mitigation{
		{name: "restart quarantine", fn: scenRestart(restartVariant{quarantine: true})},
		{name: "aof always", fn: scenRestart(restartVariant{keepData: true}), args: aofAlways},
		{name: "restart delayed past ttl", fn: scenRestart(restartVariant{delay: 1100 * time.Millisecond})},
	}},
	{"client pause past validity", scenClientPauseAfter(false), []mitigation{
		{name: "fencing", fn: scenClientPauseAfter(true)},
	}},
	{"client clock 15% slow with drift factor 5%", scenClockDriftFactor(0.85, 0.05), []mitigation{
		{name: "drift factor 25%", fn: scenClockDriftFactor(0.85, 0.25)},
	}},
	{"server clock jump on 3 masters", scenServerClockJump(false), []mitigation{
		{name: "fencing", fn: scenServerClockJump(true), fenced: true},
	}},
	{"eviction under volatile-lru", scenEviction("volatile-lru"), []mitigation{
		{name: "noeviction", fn: scenEviction("noeviction")},
	}},
	{"replica promotion after lost replication", scenReplicaPromotion(false), []mitigation{
		{name: "restart quarantine", fn: scenReplicaPromotion(true)},
	}},
}

// TestHazardsAreDetected runs the faults outside Redlock's model, unmitigated: the
// checker must see the overlap each one causes.
func TestHazardsAreDetected(t *testing.T) {
	for _, hz := range hazards {
		t.Run(hz.name, func(t *testing.T) {
			t.Parallel()
			runHazard(t, hz.fn, 5)
		})
	}
}

// TestHazardsAreMitigated runs each hazard of TestHazardsAreDetected with each of
// its mitigations: safe, or for fencing, the stale holder refused by the resource.
func TestHazardsAreMitigated(t *testing.T) {
	for _, hz := range hazards {
		require.NotEmpty(t, hz.mitigations, "hazard %q has no mitigation", hz.name)
		for _, mt := range hz.mitigations {
			t.Run(hz.name+"/"+mt.name, func(t *testing.T) {
				t.Parallel()
				if mt.fenced {
					runFenced(t, mt.fn, 5, mt.args...)
				} else {
					runSafe(t, mt.fn, 5, mt.args...)
				}
			})
		}
	}
}
