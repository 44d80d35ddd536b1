package quorum

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/faults"
	"github.com/redlock/redlock/internal/redistest"
)

// Attacks on Lock.Verify under faults: cancellations, script flushes,
// latency, paused masters and paused writes, restarts and flushes, with the
// holds of verify_attack_test.go.

// TestVerifyConcurrentCancelledReadsNeverMisread: many Verify calls at once on
// one Manager, each cancelled at a random point (late replies thrown away),
// share the pipes with acquisitions and releases of other names, while the
// masters' script caches are flushed, their links slowed, a master paused
// (SIGSTOP) or its writes paused (CLIENT PAUSE WRITE) now and then. Every hold
// is on exactly three masters of five (held: two hold hostile values; lost:
// three do), so one reply misread as another command's flips a verdict: a held
// lock must never be told ErrLost, a lost one never be told it holds, and the
// loss watch must give up none of the held.
func TestVerifyConcurrentCancelledReadsNeverMisread(t *testing.T) {
	a := newAtk(t, 5, redistest.Options{})
	m := a.client("holder", WithNodeTimeout(300*time.Millisecond))
	ctx := context.Background()
	type hold struct {
		name string
		l    *Lock
		held bool
	}
	var holds []*hold
	hostile := []verifyPlant{verifyPlants[0], verifyPlants[7], verifyPlants[9], verifyPlants[11]}
	for _, k := range verifyKinds {
		for _, held := range []bool{true, false} {
			for j, p := range hostile {
				h := &hold{name: fmt.Sprintf("%s/%v/%s", k.name, held, p.name), held: held}
				h.l = k.take(t, m, fmt.Sprintf("vc/%s/%v/%d", k.name, held, j))
				armed(t, m, h.l)
				fn := p.str
				if k.member {
					fn = p.member
				}
				n := 3
				if held {
					n = 2
				}
				for _, s := range a.c.Servers[:n] {
					for _, key := range k.keys(h.l) {
						require.NoError(t, fn(ctx, s.Client(), key, h.l.Token()))
					}
				}
				holds = append(holds, h)
			}
		}
	}
	t.Cleanup(func() {
		for _, h := range holds {
			_ = h.l.Release(context.Background())
		}
	})
	for _, h := range holds {
		if !h.held {
			select {
			case <-h.l.Done():
			case <-time.After(5 * time.Second):
				t.Fatalf("%s: Done did not fire", h.name)
			}
		}
	}

	actx, stop := context.WithTimeout(ctx, 3*time.Second)
	defer stop()
	var verified, cancelled, lostSeen, heldSeen atomic.Int64
	var violations atomic.Int64
	done := make(chan struct{})
	go func() { // the nemesis
		defer close(done)
		rng := rand.New(rand.NewPCG(7, 7))
		for actx.Err() == nil {
			s := a.c.Servers[rng.IntN(len(a.c.Servers))]
			switch rng.IntN(5) {
			case 0:
				_ = s.Client().ScriptFlush(ctx).Err()
			case 1:
				d := time.Duration(rng.IntN(3000)) * time.Microsecond
				a.net.Each("holder", func(p *faults.Proxy) { p.SetLatency(d, d) }, s.Name)
			case 2:
				s.Stop()
				time.Sleep(time.Duration(50+rng.IntN(350)) * time.Millisecond)
				s.Cont()
			case 3:
				a.net.Each("holder", func(p *faults.Proxy) { p.Heal() })
			case 4:
				_ = faults.ClientPause(ctx, s, time.Duration(50+rng.IntN(250))*time.Millisecond, "WRITE")
			}
			time.Sleep(time.Duration(rng.IntN(50)) * time.Millisecond)
		}
		a.net.HealAll()
	}()
	atkWorkers(actx, 12, 11, func(actx context.Context, i int, rng *rand.Rand) {
		if i >= 10 { // acquisitions and releases of other names on the same pipes
			cctx, cancel := context.WithTimeout(actx, time.Duration(rng.IntN(5000))*time.Microsecond)
			defer cancel()
			if l, err := m.TryAcquire(cctx, fmt.Sprintf("vc/churn/%d", rng.IntN(4)), time.Second); err == nil {
				_ = l.Release(context.Background())
			}
			return
		}
		h := holds[rng.IntN(len(holds))]
		cctx, cancel := context.WithCancel(actx)
		defer cancel()
		if rng.IntN(2) == 0 {
			time.AfterFunc(time.Duration(rng.IntN(3000))*time.Microsecond, cancel)
		}
		err := h.l.Verify(cctx)
		verified.Add(1)
		switch {
		case cctx.Err() != nil && err != nil:
			cancelled.Add(1)
		case err == nil:
			heldSeen.Add(1)
		case errors.Is(err, ErrLost):
			lostSeen.Add(1)
		}
		if h.held && errors.Is(err, ErrLost) || !h.held && err == nil {
			violations.Add(1)
			t.Errorf("%s (held %v): Verify said %v", h.name, h.held, err)
		}
	})
	<-done
	t.Logf("verifications %d: %d cancelled, %d held, %d lost; faults: script flushes, latency, pauses, write pauses",
		verified.Load(), cancelled.Load(), heldSeen.Load(), lostSeen.Load())
	require.Zero(t, violations.Load())
	for _, h := range holds {
		if h.held {
			require.NoError(t, h.l.Err(), "%s: the watch gave up a lock a quorum holds", h.name)
			require.NoError(t, h.l.Verify(ctx), "%s", h.name)
		} else {
			require.ErrorIs(t, h.l.Verify(ctx), ErrLost, "%s", h.name)
		}
	}
}

// TestVerifyWhileMastersRestartAndFlush: while Verify runs in a loop on every
// kind of hold, one master is killed and restarted with its data and another
// flushed (FLUSHALL): three of five still hold every hold, which no Verify and
// no loss watch may call lost; a third master flushed then is a loss every
// holder hears (Done, ErrLost).
func TestVerifyWhileMastersRestartAndFlush(t *testing.T) {
	c, m := testCluster(t, 5, WithNodeTimeout(500*time.Millisecond))
	ctx := context.Background()
	var locks []*Lock
	for _, k := range verifyKinds {
		l := k.take(t, m, "vr/"+k.name)
		armed(t, m, l)
		locks = append(locks, l)
	}
	vctx, stop := context.WithCancel(ctx)
	var wrong atomic.Int64
	var runs atomic.Int64
	var wg sync.WaitGroup
	for _, l := range locks {
		wg.Go(func() {
			for vctx.Err() == nil {
				if err := l.Verify(vctx); errors.Is(err, ErrLost) {
					wrong.Add(1)
					t.Errorf("%s: Verify said %v with three masters of five holding it", l.Name(), err)
				}
				runs.Add(1)
			}
		})
	}
	c.Servers[0].Restart(true)
	require.NoError(t, c.Servers[1].Client().FlushAll(ctx).Err())
	time.Sleep(300 * time.Millisecond)
	stop()
	wg.Wait()
	t.Logf("%d verifications during a restart and a flush", runs.Load())
	require.Zero(t, wrong.Load())
	for i, l := range locks {
		held := 0
		for _, s := range c.Servers {
			if holdsOn(t, s, verifyKinds[i], l) {
				held++
			}
		}
		require.GreaterOrEqual(t, held, 3, "%s", l.Name())
		require.NoError(t, l.Err(), "%s: the watch gave up a lock a quorum holds", l.Name())
		require.NoError(t, l.Verify(ctx), "%s", l.Name())
	}
	require.NoError(t, c.Servers[2].Client().FlushAll(ctx).Err())
	for _, l := range locks {
		select {
		case <-l.Done():
			require.ErrorIs(t, l.Err(), ErrLost, "%s", l.Name())
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: Done did not fire", l.Name())
		}
	}
}
