package quorum

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/faults"
	"github.com/redlock/redlock/internal/redistest"
)

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
			require.Eventually(s.t, func() bool { return len(b.m.quarantineEnds()) == 0 }, 5*time.Second, 20*time.Millisecond)
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
		// Liveness only (the recorder checks that B never holds inside A's
		// validity): B's single rounds with a 50 ms node timeout can stall several
		// times in a row under the race detector on a loaded machine.
		deadline = deadline.Add(2 * time.Second)
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
				return len(b.m.quarantineEnds()) == 0 && time.Duration(up)*time.Second > q
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

		deadline := h.c.real(h.l.Until()).Add(2 * time.Second) // liveness only, as in scenRestart
		if quarantine {
			deadline = deadline.Add(window)
			// B's next rounds reconnect to c and see the replica's run_id (a round
			// may first meet a connection the failover closed).
			seen := false
			for end := time.Now().Add(3 * time.Second); !seen && time.Now().Before(end); {
				if bh, err := b.try(ctx, scenLock, ttl); err == nil {
					_ = bh.release(ctx)
				}
				_, seen = b.m.quarantineEnds()["c"]
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
