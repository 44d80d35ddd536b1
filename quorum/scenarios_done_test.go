package quorum

import (
	"context"
	"time"

	"github.com/redlock/redlock/internal/faults"
)

// Scenarios about the moment a holder learns its lock is lost: its code stops when
// Done fires, so Done must fire by the deadline even when an extension is in flight
// then. The checker ends each hold when its holder saw Done.

// scenRivalPolls: A holds the lock until Done fires; B polls for it meanwhile and
// may get it only once A stopped.
func scenRivalPolls(s *scen) {
	ctx := context.Background()
	a, b := s.client("A"), s.client("B")
	const ttl = 300 * time.Millisecond
	h, err := a.try(ctx, scenLock, ttl)
	if err != nil {
		s.violate("A could not acquire a free lock: %v", err)
		return
	}
	done := make(chan struct{})
	go func() { h.holdToEnd(ctx); close(done) }()
	bh := b.until(ctx, time.Now().Add(2*time.Second), scenLock, ttl)
	<-done
	if bh == nil {
		s.violate("B never got the lock after A's expired")
		return
	}
	_ = bh.release(ctx)
}

// scenKeepAliveInFlightAtExpiry: A keeps its lock alive; just before an extension
// A loses (by blackhole or pause, chosen by the seed) two of three masters, so the
// extension is in flight when the validity ends. B polls and gets the lock once the
// keys expire; A's Done must have fired by then.
func scenKeepAliveInFlightAtExpiry(s *scen) {
	ctx := context.Background()
	a, b := s.client("A"), s.client("B")
	const ttl = 400 * time.Millisecond
	h, err := a.try(ctx, scenLock, ttl, WithKeepAlive(KeepAlive{Fraction: 0.5}))
	if err != nil {
		s.violate("A could not acquire a free lock: %v", err)
		return
	}
	select {
	case <-h.l.UntilChanged(): // the first extension succeeded
	case <-h.l.Done():
		// The first extension failed (a busy machine): the scenario cannot be set
		// up, but A stopped in time, which is all the checker asks.
		s.rec.Event("A lost the lock before its first extension")
		_ = h.release(ctx)
		return
	}
	cut := []string{"a", "b", "c", "d", "e"}[:3]
	pause := s.intn(2) == 0
	if pause {
		s.rec.Event("pause masters %v", cut)
		for _, m := range cut {
			s.server(m).Stop()
		}
	} else {
		s.rec.Event("blackhole A from %v", cut)
		a.net((*faults.Proxy).Blackhole, cut...)
	}
	done := make(chan struct{})
	go func() { h.holdToEnd(ctx); close(done) }()
	bh := b.until(ctx, time.Now().Add(3*time.Second), scenLock, ttl)
	if pause {
		// B cannot get a quorum while three of five are paused: resume them once
		// A's keys must have expired, then B takes the lock.
		time.Sleep(time.Until(h.c.real(h.l.Until()).Add(ttl)))
		for _, m := range cut {
			s.server(m).Cont()
		}
		bh = b.until(ctx, time.Now().Add(3*time.Second), scenLock, ttl)
	}
	<-done
	a.net((*faults.Proxy).Heal)
	if bh == nil {
		s.violate("B never got the lock after A's expired")
		return
	}
	_ = bh.release(ctx)
}
