package quorum

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// TestAttackMultiUnderNemesis: five clients take overlapping sets of names in
// different orders ({a,b}, {b,c}, {c,a}, {a,b,c} reversed) and a sixth takes b
// alone as a plain lock, with calls cancelled at random points, under the
// nemesis. No name is ever held by two at once, and nothing is left once all is
// quiet (no round, failed or cancelled, leaves a name behind).
func TestAttackMultiUnderNemesis(t *testing.T) {
	a := newAtk(t, 5, atkAOFAlways)
	seed := atkSeed(t)
	const ttl = 300 * time.Millisecond
	sets := [][]string{{"a", "b"}, {"c", "b"}, {"c", "a"}, {"c", "b", "a"}, {"b", "a"}, {"b"}}
	var names []string
	var ms []*Manager
	for i := range sets {
		n := fmt.Sprintf("m%d", i)
		names = append(names, n)
		ms = append(ms, a.client(n))
	}
	ctx, cancel := context.WithTimeout(context.Background(), atkDuration())
	defer cancel()
	go a.nemesis(ctx, rand.New(rand.NewPCG(seed, 0)), ttl, names)
	atkWorkers(ctx, len(ms), func(ctx context.Context, i int) {
		rng := rand.New(rand.NewPCG(seed, uint64(i+1)))
		var opts []LockOption
		if rng.IntN(2) == 0 {
			opts = append(opts, WithKeepAlive(KeepAlive{}))
		}
		actx, stop := randCtx(ctx, rng, 2*ttl)
		var l *Lock
		var err error
		kind := "multi"
		switch {
		case len(sets[i]) == 1:
			kind = ""
			l, err = ms[i].Acquire(actx, sets[i][0], ttl, opts...)
		case rng.IntN(3) == 0:
			l, err = ms[i].TryAcquireMulti(actx, sets[i], ttl, opts...)
		default:
			l, err = ms[i].AcquireMulti(actx, sets[i], ttl, opts...)
		}
		returned := time.Now()
		stop()
		a.typedOrCancelled(names[i], err)
		if err != nil {
			atkSleep(ctx, time.Duration(rng.Int64N(int64(ttl/4))))
			return
		}
		a.holdFor(rng, names[i], l, returned, kind, time.Duration(rng.Int64N(int64(ttl))))
	})
	a.check()
	time.Sleep(2 * ttl)
	for _, p := range []string{"lock:a*", "lock:b*", "lock:c*"} {
		if left := a.leftovers(p); len(left) > 0 {
			t.Errorf("keys left after quiescence: %v", left)
		}
	}
}
