package quorum

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redlock/redlock/internal/faults"
)

// Exploratory attack harness (attack-safety branch). Runs only with
// REDLOCK_EXPLORE set (a Go duration), so the normal suite does not pay for it.

func exploreDuration(t *testing.T) time.Duration {
	v := os.Getenv("REDLOCK_EXPLORE")
	if v == "" {
		t.Skip("set REDLOCK_EXPLORE=20s to run the exploratory attack")
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// ownerHold records one successful acquisition under a distinct owner name.
func (c *client) recordHold(owner string, start time.Time, ret time.Time, l *Lock, ttl time.Duration) *held {
	c.s.rec.Bound(owner, start, l.Until(), ttl, c.budget(ttl))
	h := &held{c: c, l: l, h: c.s.rec.Acquired(owner, l.Name(), ret, c.real(l.Until()))}
	go func() {
		<-l.Done()
		h.h.Done(time.Now(), c.real(l.Until()))
	}()
	return h
}

// TestExploreStress: many goroutines per client on one name, tiny node timeouts,
// latency near the node timeout, resets, pauses, lost replies; Extend racing
// Release racing the keep-alive on the same Lock.
func TestExploreStress(t *testing.T) {
	d := exploreDuration(t)
	s := newScen(t, mutants{}, 5)
	masters := []string{"a", "b", "c", "d", "e"}
	timeouts := []time.Duration{15 * time.Millisecond, 30 * time.Millisecond, 60 * time.Millisecond, 100 * time.Millisecond}
	var cls []*client
	for i := range 6 {
		cls = append(cls, s.client(fmt.Sprintf("C%d", i), WithNodeTimeout(timeouts[i%len(timeouts)]), WithRetry(3, 3*time.Millisecond, 2*time.Millisecond)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	// nemesis
	wg.Go(func() {
		for ctx.Err() == nil {
			cl := cls[s.intn(len(cls))].name
			var some []string
			for _, x := range masters {
				if s.intn(2) == 0 {
					some = append(some, x)
				}
			}
			hold := time.Duration(5+s.intn(80)) * time.Millisecond
			switch s.intn(6) {
			case 0, 1:
				lat := time.Duration(s.intn(12)) * time.Millisecond
				s.net.Each(cl, func(p *faults.Proxy) { p.SetLatency(lat, time.Duration(s.intn(12))*time.Millisecond) }, some...)
				time.Sleep(hold)
			case 2:
				s.net.Each(cl, (*faults.Proxy).Reset, some...)
				time.Sleep(hold)
			case 3:
				s.net.Each(cl, (*faults.Proxy).LoseReplies, some...)
				time.Sleep(hold)
			case 4:
				m := masters[s.intn(len(masters))]
				s.rec.Event("pause %s %v", m, hold)
				faults.Pause(s.server(m), hold)
			case 5:
				s.net.Each(cl, (*faults.Proxy).Blackhole, some...)
				time.Sleep(hold)
			}
			s.net.HealAll()
		}
	})
	var holds atomic.Int64
	type strict struct {
		owner    string
		from, to time.Time
		doneLate time.Duration
	}
	var smu sync.Mutex
	var stricts []strict
	var emu sync.Mutex
	errs := map[string]int{}
	for ci, c := range cls {
		for g := range 2 {
			owner := fmt.Sprintf("%s.%d", c.name, g)
			rng := rand.New(rand.NewPCG(uint64(ci), uint64(g)))
			wg.Go(func() {
				for ctx.Err() == nil {
					ttl := time.Duration(100+rng.IntN(200)) * time.Millisecond
					var opts []LockOption
					owner := owner
					if rng.IntN(2) == 0 {
						ka := KeepAlive{Fraction: 0.2 + rng.Float64()*0.7, MaxExtensions: rng.IntN(4), MaxHold: time.Duration(rng.IntN(300)) * time.Millisecond}
						opts = append(opts, WithKeepAlive(ka))
						owner += fmt.Sprintf("/ka%+v", ka)
					}
					if rng.IntN(3) == 0 {
						opts = append(opts, WithFencing())
						owner += "/fence"
					}
					if rng.IntN(4) == 0 {
						opts = append(opts, WithLossWatch())
						owner += "/watch"
					}
					start := c.m.cfg.clock.Now()
					l, err := c.m.TryAcquire(ctx, scenLock, ttl, opts...)
					ret := time.Now()
					if err != nil {
						emu.Lock()
						k := err.Error()
						if len(k) > 400 {
							k = k[:400]
						}
						errs[k]++
						emu.Unlock()
						if !typed(err) && ctx.Err() == nil {
							s.rec.Violate("untyped", "%s acquire: %T %v", owner, err, err)
						}
						time.Sleep(time.Duration(rng.IntN(3)) * time.Millisecond)
						continue
					}
					holds.Add(1)
					h := c.recordHold(owner, start, ret, l, ttl)
					var ewg sync.WaitGroup
					nx := rng.IntN(3)
					if nx > 0 {
						owner += fmt.Sprintf("/ext%d", nx)
					}
					for range nx {
						sl := time.Duration(rng.IntN(int(ttl/time.Millisecond))) * time.Millisecond
						et := time.Duration(1+rng.IntN(150)) * time.Millisecond
						ewg.Go(func() {
							time.Sleep(sl)
							_ = et
							s.rec.Event("%s extend %v start (until %v)", owner, et, time.Until(l.Until()))
							err := l.Extend(context.Background(), et)
							s.rec.Event("%s extend %v end: %v (until %v)", owner, et, err, time.Until(l.Until()))
							if err == nil {
								r := time.Now()
								h.h.Extended(r, c.real(l.Until()))
							}
						})
					}
					tm := time.NewTimer(time.Duration(rng.IntN(2*int(ttl/time.Millisecond))) * time.Millisecond)
					select {
					case <-tm.C:
					case <-l.Done():
					}
					tm.Stop()
					relAt := time.Now()
					h.h.Released(relAt)
					u := l.Until()
					_ = l.Release(context.Background())
					ewg.Wait()
					smu.Lock()
					stricts = append(stricts, strict{owner: owner, from: ret, to: minTime(relAt, u)})
					smu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	s.net.HealAll()
	time.Sleep(400 * time.Millisecond)
	s.checkKeys(true)
	t.Logf("%d holds", holds.Load())
	for k, v := range errs {
		t.Logf("%6d %s", v, k)
	}
	for i, a := range stricts {
		for _, b := range stricts[i+1:] {
			if a.from.Before(b.to) && b.from.Before(a.to) {
				t.Errorf("STRICT overlap (Until-based): %s [%v] and %s [%v]", a.owner, a.to.Sub(a.from), b.owner, b.to.Sub(b.from))
			}
		}
	}
	s.rec.Report(t)
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
