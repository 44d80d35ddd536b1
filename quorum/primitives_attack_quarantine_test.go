package quorum

import (
	"context"
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
	names, ms := a.clients("q", 6, WithMaxTTL(ttl), WithRestartQuarantine(ttl+50*time.Millisecond))
	time.Sleep(1100 * time.Millisecond) // the brand-new masters' own quarantine
	a.workload(seed, ttl, ttl, names, func(ctx context.Context, rng *rand.Rand, i int) (*Lock, string, error) {
		var opts []LockOption
		if rng.IntN(2) == 0 {
			opts = append(opts, WithKeepAlive(KeepAlive{}))
		}
		var l *Lock
		var err error
		kind := ""
		switch i {
		case 0, 1:
			l, err = ms[i].Acquire(ctx, "q/sem", ttl, append(opts, withPermits(2))...)
		case 2:
			kind = "shared"
			l, err = ms[i].Acquire(ctx, "q/rw", ttl, append(opts, withShared())...)
		case 3:
			l, err = ms[i].Acquire(ctx, "q/rw", ttl, opts...)
		case 4:
			kind = "multi"
			l, err = ms[i].takeMulti(ctx, []string{"q/a", "q/b"}, ttl, opts...)
		case 5:
			kind = "multi"
			l, err = ms[i].takeMulti(ctx, []string{"q/b", "q/c"}, ttl, opts...)
		}
		return l, kind, err
	})
}
