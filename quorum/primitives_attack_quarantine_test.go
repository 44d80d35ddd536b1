package quorum

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/redlock/redlock/internal/redistest"
)

// TestAttackPrimitivesUnderRestartsWithoutData: masters without persistence are
// killed and restarted at once (every key on them forgotten) among the nemesis's
// other faults, and every client runs the restart quarantine (the documented
// mitigation): semaphore, shared and multi-name workloads keep their invariants.
func TestAttackPrimitivesUnderRestartsWithoutData(t *testing.T) {
	a := newAtk(t, 5, redistest.Options{})
	a.forget = true
	seed := atkSeed(t)
	const ttl = 300 * time.Millisecond
	a.rec.Limit("q/sem", 2)
	var names []string
	var ms []*Manager
	for i := range 6 {
		n := fmt.Sprintf("q%d", i)
		names = append(names, n)
		ms = append(ms, a.client(n, WithMaxTTL(ttl), WithRestartQuarantine(ttl+50*time.Millisecond)))
	}
	time.Sleep(1100 * time.Millisecond) // the brand-new masters' own quarantine
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
		kind := ""
		switch i {
		case 0, 1:
			l, err = ms[i].Acquire(actx, "q/sem", ttl, append(opts, WithPermits(2))...)
		case 2:
			kind = "shared"
			l, err = ms[i].Acquire(actx, "q/rw", ttl, append(opts, WithShared())...)
		case 3:
			l, err = ms[i].Acquire(actx, "q/rw", ttl, opts...)
		case 4:
			kind = "multi"
			l, err = ms[i].AcquireMulti(actx, []string{"q/a", "q/b"}, ttl, opts...)
		case 5:
			kind = "multi"
			l, err = ms[i].AcquireMulti(actx, []string{"q/b", "q/c"}, ttl, opts...)
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
}
