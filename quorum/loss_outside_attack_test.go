package quorum

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/checker"
	"github.com/redlock/redlock/internal/redistest"
)

// outsideKind is one kind of hold that the clients of an outside-causes run
// contend for: the names the outsider takes away, a permit limit (0: none), and
// how a client takes a hold (kind as for atk.hold).
type outsideKind struct {
	name  string
	names []string
	limit int
	take  func(ctx context.Context, m *Manager, rng *rand.Rand) (l *Lock, kind string, err error)
}

var outsideKinds = []outsideKind{
	{"mutex", []string{"om"}, 0, func(ctx context.Context, m *Manager, _ *rand.Rand) (*Lock, string, error) {
		l, err := m.Acquire(ctx, "om", outsideTTL, WithLossWatch())
		return l, "", err
	}},
	{"permit", []string{"op"}, 2, func(ctx context.Context, m *Manager, _ *rand.Rand) (*Lock, string, error) {
		l, err := m.Acquire(ctx, "op", outsideTTL, withPermits(2), WithLossWatch())
		return l, "", err
	}},
	{"shared", []string{"os"}, 0, func(ctx context.Context, m *Manager, rng *rand.Rand) (*Lock, string, error) {
		if rng.IntN(3) == 0 {
			l, err := m.Acquire(ctx, "os", outsideTTL, WithLossWatch())
			return l, "", err
		}
		l, err := m.Acquire(ctx, "os", outsideTTL, withShared(), WithLossWatch())
		return l, "shared", err
	}},
	{"multi", []string{"oa", "ob", "oc"}, 0, func(ctx context.Context, m *Manager, rng *rand.Rand) (*Lock, string, error) {
		names := []string{"oa", "ob"}
		if rng.IntN(2) == 0 {
			names = []string{"ob", "oc"}
		}
		l, err := m.takeMulti(ctx, names, outsideTTL, WithLossWatch())
		return l, "multi", err
	}},
	{"leadership", []string{"ol" + leaderSuffix}, 0, func(ctx context.Context, m *Manager, _ *rand.Rand) (*Lock, string, error) {
		e, err := m.Election("ol")
		if err != nil {
			return nil, "", err
		}
		ld, err := e.Campaign(ctx, "me", outsideTTL)
		if err != nil {
			return nil, "", err
		}
		return ld.Lock, "", nil
	}},
}

// outsideTTL is long against the holds (at most outsideHold): without the loss
// watch, a hold taken away is heard only at its release (or, kept alive, at
// its next extension, outsideTTL/2 after the last).
const (
	outsideTTL  = 3 * time.Second
	outsideHold = 1200 * time.Millisecond
)

// outsideWindow is the overlap a removal from outside makes inherently: the
// outsider gives the name away at once (the next acquirer may take it as soon
// as the removal reached a quorum), and the old holder's Done fires within the
// loss watch's bound after that moment: 2 round trips + the node timeout (200ms
// for the attack's clients). A round trip is allowed 50ms on this loaded
// machine, and the goroutine that sees Done checker.DoneSlack.
const outsideWindow = 200*time.Millisecond + 2*50*time.Millisecond + checker.DoneSlack

// TestAttackOutsideRemovalsOverlapOnlyWithinTheLossBound: four clients contend
// for one name of each kind (mutex, permit of 2, shared and exclusive holds,
// overlapping multi-name locks, leadership) while an outsider, at random
// moments, DELs the name's keys, FLUSHALLs or SETs another value (expiring
// soon) on 3 of 5 masters. An outside removal gives the name away at once, so
// two holds may overlap until the old holder's Done fires: the checker
// measures every stretch of time during which the holds (from an
// acquisition's return to the moment its holder saw Done or released) broke
// exclusion, and each must be within outsideWindow. With the loss watch off,
// the same run must show a longer one (the old holder heard nothing until its
// release or next extension), or this test would prove nothing. Terms are not
// checked: a FLUSHALL takes the election's term counter away with it.
func TestAttackOutsideRemovalsOverlapOnlyWithinTheLossBound(t *testing.T) {
	for _, k := range outsideKinds {
		t.Run(k.name, func(t *testing.T) {
			seed := atkSeed(t)
			on := outsideRun(t, k, seed, true)
			off := outsideRun(t, k, seed, false)
			t.Logf("%s: longest overlap %v with the loss watch (%d stretches), %v without (%d); allowed %v",
				k.name, on.longest, on.n, off.longest, off.n, outsideWindow)
			require.LessOrEqual(t, on.longest, outsideWindow, "an overlap past the loss watch's bound")
			require.Greater(t, off.longest, outsideWindow, "without the loss watch the overlaps are no longer: the run proves nothing")
		})
	}
}

// overlaps is what an outside-causes run measured: the stretches of time during
// which holds broke exclusion, how many and the longest.
type overlaps struct {
	n       int
	longest time.Duration
}

// outsideRun runs the clients and the outsider for atkDuration (twice that
// without the loss watch), with the loss watch or without (a watcher that watches nothing: a leadership and every
// kept-alive hold are watched otherwise), and checks the history but for the
// overlaps, which it returns.
func outsideRun(t *testing.T, k outsideKind, seed uint64, watch bool) overlaps {
	a := newAtk(t, 5, redistest.Options{})
	names, ms := a.clients("c", 4)
	if !watch {
		for _, m := range ms {
			unwatched(m)
		}
	}
	if k.limit > 0 {
		a.rec.Limit(k.names[0], k.limit)
	}
	d := atkDuration()
	if !watch {
		// Twice as long: each overlap is then as long as what was left of the
		// old hold, and the longest of about eight has to exceed the window.
		d *= 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { a.outsider(ctx, rand.New(rand.NewPCG(seed, 99)), ms[0], k.names) })
	var mu sync.Mutex
	shared := map[string]bool{}
	seq := 0
	atkWorkers(ctx, len(names), seed, func(ctx context.Context, i int, rng *rand.Rand) {
		actx, stop := context.WithTimeout(ctx, 2*outsideHold)
		l, kind, err := k.take(actx, ms[i], rng)
		returned := time.Now()
		stop()
		a.typedOrCancelled(names[i], err)
		if l == nil {
			return
		}
		mu.Lock()
		seq++
		owner := fmt.Sprintf("%s.%d", names[i], seq)
		shared[owner] = kind == "shared"
		mu.Unlock()
		// Not atk.holdFor: its check that the masters hold the lock right after
		// the acquisition would see the outsider's removals.
		h := a.hold(owner, l, returned, kind)
		atkSleepOr(l.Done(), outsideHold/4+time.Duration(rng.Int64N(int64(outsideHold*3/4))))
		h.Released(time.Now())
		rctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		_ = l.Release(rctx)
		cancel()
	})
	cancel()
	wg.Wait()
	time.Sleep(3 * checker.DoneSlack) // the Done watchers of the last holds
	var other []checker.Violation
	for _, v := range a.rec.Violations() {
		switch v.Kind {
		case checker.KindOverlap, checker.KindTooMany, checker.KindTerm:
		default:
			other = append(other, v)
		}
	}
	require.Empty(t, other, "violations")
	runs := brokenStretches(a.rec.Intervals(), shared, k.limit)
	out := overlaps{n: len(runs)}
	if len(runs) > 0 {
		out.longest = slices.Max(runs)
	}
	t.Logf("watch %v: %d holds, %d outside removals, overlaps %v", watch, a.holds.Load(), a.faults.Load(), runs)
	return out
}

// atkSleepOr sleeps d, or until done is closed (not when ctx ends: a hold
// lasts its time).
func atkSleepOr(done <-chan struct{}, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-done:
	}
}

// unwatched gives m a loss watcher without trackers: every hold of m, asked to
// be watched or not, is then watched by nothing.
func unwatched(m *Manager) {
	ctx, cancel := context.WithCancel(context.Background())
	m.wakeMu.Lock()
	m.loss = &lossWatcher{m: m, ctx: ctx, cancel: cancel, ready: make(chan struct{}, 1)}
	m.wakeMu.Unlock()
}

// outsider takes the names away on 3 random masters of 5 at random moments,
// as another client or an operator would: DEL of their keys, FLUSHALL, or SET
// of another value that expires within 50ms. It leaves the fence and term
// counters alone (but for FLUSHALL). m gives the keys' prefix.
func (a *atk) outsider(ctx context.Context, rng *rand.Rand, m *Manager, names []string) {
	bg := context.Background()
	for ctx.Err() == nil {
		atkSleep(ctx, 100*time.Millisecond+time.Duration(rng.Int64N(int64(500*time.Millisecond))))
		cause := rng.IntN(3)
		perm := rng.Perm(len(a.c.Servers))[:3]
		for _, i := range perm {
			cl := a.c.Servers[i].Client()
			if cause == 1 {
				_ = cl.FlushAll(bg).Err()
				_ = cl.Close()
				continue
			}
			for _, name := range names {
				keys, _ := cl.Keys(bg, m.Key(name)+"*").Result()
				for _, key := range keys {
					if strings.HasSuffix(key, fenceSuffix) || strings.HasSuffix(key, termSuffix) {
						continue
					}
					if cause == 0 {
						_ = cl.Del(bg, key).Err()
					} else {
						_ = cl.Set(bg, key, "rl1.outsider.x", time.Millisecond+time.Duration(rng.Int64N(int64(50*time.Millisecond)))).Err()
					}
				}
			}
			_ = cl.Close()
		}
		a.fault("%s on masters %v", [...]string{"DEL", "FLUSHALL", "SET"}[cause], perm)
	}
}

// brokenStretches returns the length of every stretch of time during which the
// intervals of one lock broke exclusion: two exclusive holders, a shared and an
// exclusive one, or more than limit holders of a lock with permits (limit > 0).
// shared tells the shared holds by owner.
func brokenStretches(iv []checker.Interval, shared map[string]bool, limit int) []time.Duration {
	type edge struct {
		at     float64
		delta  int
		shared bool
	}
	byLock := map[string][]edge{}
	for _, x := range iv {
		s := shared[x.Owner]
		byLock[x.Lock] = append(byLock[x.Lock], edge{x.From, 1, s}, edge{x.To, -1, s})
	}
	var out []time.Duration
	for _, es := range byLock {
		slices.SortFunc(es, func(a, b edge) int {
			if a.at != b.at {
				if a.at < b.at {
					return -1
				}
				return 1
			}
			return a.delta - b.delta // an end before a start at the same moment
		})
		excl, sh := 0, 0
		broken, since := false, 0.0
		for _, e := range es {
			if e.shared {
				sh += e.delta
			} else {
				excl += e.delta
			}
			now := excl > 1 || excl > 0 && sh > 0
			if limit > 0 {
				now = excl > limit
			}
			switch {
			case now && !broken:
				since = e.at
			case !now && broken:
				out = append(out, time.Duration((e.at-since)*float64(time.Millisecond)))
			}
			broken = now
		}
	}
	return out
}
