package quorum

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
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
	a.workload(seed, ttl, ttl, names, func(ctx context.Context, rng *rand.Rand, i int) (*Lock, string, error) {
		who := names[i]
		if who == "peer" {
			value := fmt.Sprintf("peer-%d", rng.Int64())
			until := pr.lock(ctx, "lock:rw", value, ttl)
			returned := time.Now()
			if until.IsZero() || !returned.Before(until) {
				return nil, "", nil
			}
			a.count(who)
			h := a.rec.Acquired(who, "rw", returned, until)
			atkSleep(context.Background(), min(time.Until(until), time.Duration(rng.Int64N(int64(ttl)))))
			h.Released(time.Now())
			pr.unlock("lock:rw", value)
			return nil, "", nil
		}
		var opts []LockOption
		kind := ""
		switch who {
		case "s0", "s1", "s2":
			opts, kind = append(opts, withShared()), "shared"
		case "x1":
			opts = append(opts, WithFair())
		}
		if rng.IntN(2) == 0 {
			opts = append(opts, WithKeepAlive(KeepAlive{}))
		}
		l, err := ms[who].Acquire(ctx, "rw", ttl, opts...)
		return l, kind, err
	})
	time.Sleep(2 * ttl)
	if left := a.leftovers("lock:rw*"); len(left) > 0 {
		t.Errorf("keys left after quiescence: %v", left)
	}
}

// TestAttackExclusiveWaiterIsNotStarved: three clients keep a stream of
// overlapping shared holds going (each kept alive, held 150ms, a new one every
// 40ms per client, one-round tries and blocking waits mixed); a blocking
// exclusive waiter on another client still gets in, and every shared hold before
// it has ended when it does. (A fair exclusive waiter sets no marker: SAFETY.md
// says it can be starved.)
func TestAttackExclusiveWaiterIsNotStarved(t *testing.T) {
	a := newAtk(t, 5, redistest.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var readers []*Manager
	for i := range 3 {
		readers = append(readers, a.client(fmt.Sprintf("r%d", i)))
	}
	x := a.client("x", WithRetry(1000, 20*time.Millisecond, 10*time.Millisecond))
	done := make(chan struct{})
	go func() {
		defer close(done)
		atkWorkers(ctx, len(readers), 1, func(ctx context.Context, i int, _ *rand.Rand) {
			var l *Lock
			var err error
			if i == 0 {
				l, err = readers[i].TryAcquire(ctx, "rw", 300*time.Millisecond, withShared(), WithKeepAlive(KeepAlive{}))
			} else {
				l, err = readers[i].Acquire(ctx, "rw", 300*time.Millisecond, withShared(), WithKeepAlive(KeepAlive{}))
			}
			returned := time.Now()
			if err == nil {
				go a.holdFor(rand.New(rand.NewPCG(1, 2)), fmt.Sprintf("r%d", i), l, returned, "shared", 150*time.Millisecond)
			}
			atkSleep(ctx, 40*time.Millisecond)
		})
	}()
	time.Sleep(200 * time.Millisecond)
	opts := []LockOption{WithWait(3 * time.Second)}
	t0 := time.Now()
	l, err := x.Acquire(ctx, "rw", time.Second, opts...)
	returned := time.Now()
	require.NoError(t, err, "the exclusive waiter gets in")
	t.Logf("exclusive waiter got in after %v", returned.Sub(t0))
	a.holdFor(rand.New(rand.NewPCG(1, 3)), "x", l, returned, "", 100*time.Millisecond)
	cancel()
	<-done
	time.Sleep(200 * time.Millisecond) // the last shared holds end
	a.check()
}
