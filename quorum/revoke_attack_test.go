package quorum

import (
	"context"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redlock/redlock/internal/keyspace"
)

// TestAttackRevocationsAmongTheFaults: four clients take one name (half of the
// holds with a loss watch, half kept alive), hold it a random time and release it, under
// the nemesis, while an administrator (a client of its own, whose links the
// nemesis breaks too) revokes what a listing shows of the name, or the token of
// a recent holder, every few hundred milliseconds. The checker finds no two
// holds overlapping: from its acquisition's return to the moment its holder saw
// Done fire or released, nobody else held the name, revoked holders included.
func TestAttackRevocationsAmongTheFaults(t *testing.T) {
	for _, shared := range []bool{false, true} {
		name := "exclusive"
		if shared {
			name = "shared"
		}
		t.Run(name, func(t *testing.T) { attackRevocations(t, shared) })
	}
}

// attackRevocations is TestAttackRevocationsAmongTheFaults; with shared, half the
// clients take shared holds of the name and the administrator revokes shared
// holders one by one too.
func attackRevocations(t *testing.T, shared bool) {
	a := newAtk(t, 5, atkAOFAlways)
	seed := atkSeed(t)
	const ttl = 300 * time.Millisecond
	names, ms := a.clients("r", 4)
	admin := a.client("admin")
	ctx, cancel := context.WithTimeout(context.Background(), atkDuration())
	defer cancel()
	waitNemesis := a.startNemesis(ctx, rand.New(rand.NewPCG(seed, 0)), ttl, append(names, "admin"))

	var mu sync.Mutex
	var recent []string // tokens of recent holders
	var revoked int
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(seed, 99))
		for ctx.Err() == nil {
			atkSleep(ctx, time.Duration(rng.Int64N(int64(ttl))))
			rctx, stop := randCtx(ctx, rng, ttl)
			if shared && rng.IntN(2) == 0 {
				// The holders the masters show, tombstones left out.
				_, members, _ := admin.sharedMembers(rctx, admin.Key("rv"))
				holders := map[string]bool{}
				for _, left := range members {
					for v := range left {
						holders[v] = !keyspace.IsTombstone(v)
					}
				}
				for _, v := range slices.Sorted(maps.Keys(holders)) {
					if holders[v] && rng.IntN(2) == 0 {
						if _, rep, _ := admin.revokeShared(rctx, "rv", v); rep != nil && rep.Votes > 0 {
							a.fault("revoked shared holder %s on %d masters", redact(v), rep.Votes)
							revoked++
						}
					}
				}
			} else if rng.IntN(2) == 0 {
				if lst, _ := admin.inspect(rctx, "rv"); lst != nil && lst.Lock("rv") != nil {
					seen := map[string]keyspace.Seen{}
					for _, mv := range lst.Lock("rv").Masters {
						if mv.Present {
							seen[mv.Master] = keyspace.Seen{Type: mv.Type, Value: mv.Value}
						}
					}
					if _, rep, _ := admin.revokeSeen(rctx, "rv", seen); rep != nil && rep.Votes > 0 {
						a.fault("revoked what a listing showed on %d masters", rep.Votes)
						revoked++
					}
				}
			} else if !shared || rng.IntN(2) == 0 {
				mu.Lock()
				tok := ""
				if len(recent) > 0 {
					tok = recent[rng.IntN(len(recent))]
				}
				mu.Unlock()
				if tok != "" {
					if _, rep, _ := admin.revokeToken(rctx, "rv", tok); rep != nil && rep.Votes > 0 {
						a.fault("revoked %s on %d masters", redact(tok), rep.Votes)
						revoked++
					}
				}
			}
			stop()
		}
	}()
	atkWorkers(ctx, len(names), seed, func(ctx context.Context, i int, rng *rand.Rand) {
		var opts []LockOption
		if rng.IntN(2) == 0 { // without, a revoked holder hears it at its next extension, or at Until
			opts = append(opts, WithLossWatch())
		}
		if rng.IntN(2) == 0 {
			opts = append(opts, WithKeepAlive(KeepAlive{}))
		}
		kind := ""
		if shared && i%2 == 0 {
			opts, kind = append(opts, withShared()), "shared"
		}
		actx, stop := randCtx(ctx, rng, 2*ttl)
		l, err := ms[i].Acquire(actx, "rv", ttl, opts...)
		returned := time.Now()
		stop()
		a.typedOrCancelled(names[i], err)
		if l == nil {
			atkSleep(ctx, time.Duration(rng.Int64N(int64(ttl/4))))
			return
		}
		mu.Lock()
		recent = append(recent, l.Token())
		if len(recent) > 8 {
			recent = recent[1:]
		}
		mu.Unlock()
		h := a.hold(names[i], l, returned, kind)
		select {
		case <-time.After(time.Duration(rng.Int64N(int64(2 * ttl)))):
		case <-l.Done():
		}
		h.Released(time.Now())
		rctx, cancel := randCtx(context.Background(), rng, 50*time.Millisecond)
		_ = l.Release(rctx)
		cancel()
	})
	cancel()
	wg.Wait()
	waitNemesis()
	t.Logf("revocations that replaced a value: %d", revoked)
	a.check()
}
