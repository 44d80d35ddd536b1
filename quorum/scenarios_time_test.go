package quorum

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/defaults"
	"github.com/redlock/redlock/internal/faults"
)

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
//
// A's validity outlasts its keys by about ttl*((1-factor)/rate-1): the window in
// which B must win for the hazard to strike. At a TTL of 1 s and rate 0.85 that was
// 115 ms, which B's polling missed twice in one run of the package under the race
// detector on a loaded machine (TestHazardsAreDetected, TestModelTrailsReplay);
// 2 s makes it 235 ms, and the mitigation (factor 0.25) still ends A's validity
// 235 ms before its keys expire.
func scenClockDriftFactor(rate, factor float64) scenario {
	return func(s *scen) {
		ctx := context.Background()
		const ttl = 2 * time.Second
		a := s.client("A", WithClock(faults.NewDriftClock(rate)), WithDrift(factor, 2*time.Millisecond))
		b := s.client("B", WithDrift(factor, 2*time.Millisecond))
		// A free lock, taken at once on a quiet machine; 5 s for a loaded one (a
		// mutant's pipeline stress attack beside it under the race detector
		// failed A's rounds for 2 s).
		h := a.until(ctx, time.Now().Add(5*time.Second), scenLock, ttl)
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
			_, err := faults.ShiftClock(ctx, s.server(n), defaults.KeyPrefix+"*", -400*time.Millisecond)
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
