package quorum

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// TestAttackSharedUnderNemesis: three shared holders, a blocking exclusive
// waiter, a fair exclusive waiter and a peer's plain SET NX on the same key, with
// calls cancelled at random points, under the nemesis. A shared hold never
// overlaps an exclusive one (this tool's or the peer's), two exclusive holds never
// overlap, and nothing is left once all is quiet.
func TestAttackSharedUnderNemesis(t *testing.T) {
	a := newAtk(t, 5, atkAOFAlways)
	seed := atkSeed(t)
	const ttl = 300 * time.Millisecond
	names := []string{"s0", "s1", "s2", "x0", "x1", "peer"}
	ms := map[string]*Manager{}
	for _, n := range names[:5] {
		ms[n] = a.client(n)
	}
	pr := a.peer("peer")
	ctx, cancel := context.WithTimeout(context.Background(), atkDuration())
	defer cancel()
	go a.nemesis(ctx, rand.New(rand.NewPCG(seed, 0)), ttl, names)
	atkWorkers(ctx, len(names), func(ctx context.Context, i int) {
		rng := rand.New(rand.NewPCG(seed, uint64(i+1)))
		who := names[i]
		if who == "peer" {
			value := fmt.Sprintf("peer-%d", rng.Int64())
			until := pr.lock(ctx, "lock:rw", value, ttl)
			returned := time.Now()
			if until.IsZero() || !returned.Before(until) {
				atkSleep(ctx, time.Duration(rng.Int64N(int64(ttl/2))))
				return
			}
			a.count(who)
			h := a.rec.Acquired(who, "rw", returned, until)
			atkSleep(context.Background(), min(time.Until(until), time.Duration(rng.Int64N(int64(ttl)))))
			h.Released(time.Now())
			pr.unlock("lock:rw", value)
			return
		}
		var opts []LockOption
		kind := ""
		switch who {
		case "s0", "s1", "s2":
			opts, kind = append(opts, WithShared()), "shared"
		case "x1":
			opts = append(opts, WithFair())
		}
		if rng.IntN(2) == 0 {
			opts = append(opts, WithKeepAlive(KeepAlive{}))
		}
		actx, stop := randCtx(ctx, rng, 2*ttl)
		l, err := ms[who].Acquire(actx, "rw", ttl, opts...)
		returned := time.Now()
		stop()
		a.typedOrCancelled(who, err)
		if err != nil {
			atkSleep(ctx, time.Duration(rng.Int64N(int64(ttl/4))))
			return
		}
		a.holdFor(rng, who, l, returned, kind, time.Duration(rng.Int64N(int64(ttl))))
	})
	a.check()
	time.Sleep(2 * ttl)
	if left := a.leftovers("lock:rw*"); len(left) > 0 {
		t.Errorf("keys left after quiescence: %v", left)
	}
}
