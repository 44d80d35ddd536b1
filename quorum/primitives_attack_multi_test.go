package quorum

import (
	"context"
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
	names, ms := a.clients("m", len(sets))
	a.workload(seed, ttl, ttl, names, func(ctx context.Context, rng *rand.Rand, i int) (*Lock, string, error) {
		var opts []LockOption
		if rng.IntN(2) == 0 {
			opts = append(opts, WithKeepAlive(KeepAlive{}))
		}
		switch {
		case len(sets[i]) == 1:
			l, err := ms[i].Acquire(ctx, sets[i][0], ttl, opts...)
			return l, "", err
		case rng.IntN(3) == 0:
			l, err := ms[i].tryMulti(ctx, sets[i], ttl, opts...)
			return l, "multi", err
		}
		l, err := ms[i].takeMulti(ctx, sets[i], ttl, opts...)
		return l, "multi", err
	})
	time.Sleep(2 * ttl)
	for _, p := range []string{"lock:a*", "lock:b*", "lock:c*"} {
		if left := a.leftovers(p); len(left) > 0 {
			t.Errorf("keys left after quiescence: %v", left)
		}
	}
}
