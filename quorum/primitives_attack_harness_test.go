package quorum

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/checker"
	"github.com/redlock/redlock/internal/faults"
	"github.com/redlock/redlock/internal/redistest"
)

// The harness of the attacks on the primitives (primitives_attack*_test.go): real
// masters, one proxy per (client, master) so that each client's network can be
// broken on its own, and a checker that records what each holder relies on: from
// the moment its acquisition returned to the moment it saw Done fire or called
// Release.

// atk is one attack: masters, proxies, a history, and counters for the report.
type atk struct {
	t   *testing.T
	c   *redistest.Cluster
	net *faults.Net
	rec *checker.Recorder

	holds  atomic.Int64 // holds recorded
	faults atomic.Int64 // faults injected

	// forget: the nemesis restarts masters without their data (at once), for
	// clients that run the restart quarantine.
	forget bool

	mu      sync.Mutex
	byOwner map[string]int // holds per owner
}

// count counts a hold of owner.
func (a *atk) count(owner string) {
	a.holds.Add(1)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.byOwner == nil {
		a.byOwner = map[string]int{}
	}
	a.byOwner[owner]++
}

func newAtk(t *testing.T, masters int, opts redistest.Options) *atk {
	t.Helper()
	a := &atk{t: t, c: redistest.Start(t, masters, opts), net: faults.NewNet(t), rec: checker.New(1)}
	t.Cleanup(a.rec.ProbeScheduling())
	return a
}

// client returns a Manager of client name whose connections run through its own
// proxies (base options as the package's tests: no quarantine, 200ms node
// timeout, fast retries; opts after them).
func (a *atk) client(name string, opts ...Option) *Manager {
	a.t.Helper()
	nodes := make([]Node, len(a.c.Servers))
	for i, s := range a.c.Servers {
		p := a.net.Proxy(name, s.Name, s.Addr())
		nodes[i] = Node{Name: s.Name, Addr: s.Addr(), Dialer: p.Dial}
	}
	base := []Option{WithRestartQuarantine(0), WithNodeTimeout(200 * time.Millisecond), WithRetry(3, 20*time.Millisecond, 10*time.Millisecond)}
	m, err := New(nodes, append(base, opts...)...)
	require.NoError(a.t, err)
	a.t.Cleanup(func() { _ = m.Close() })
	return m
}

// fault counts an injected fault and notes it in the history.
func (a *atk) fault(format string, args ...any) {
	a.faults.Add(1)
	a.rec.Event(format, args...)
}

// hold records l (acquired by owner, returned at returned) and, in the
// background, the moment its holder sees Done. kind: "" exclusive, "shared",
// "multi" (every name of l).
func (a *atk) hold(owner string, l *Lock, returned time.Time, kind string) *checker.Hold {
	a.count(owner)
	var h *checker.Hold
	switch kind {
	case "shared":
		h = a.rec.AcquiredShared(owner, l.Name(), returned, l.Until())
	case "multi":
		h = a.rec.AcquiredMulti(owner, namesOf(l), returned, l.Until())
	default:
		h = a.rec.Acquired(owner, l.Name(), returned, l.Until())
	}
	go watchDone(l, h, func(t time.Time) time.Time { return t })
	return h
}

// check fails the test on any violation of the history, and logs the counts.
func (a *atk) check() {
	a.t.Helper()
	time.Sleep(3 * checker.DoneSlack) // the Done watchers of the last holds
	v := a.rec.Report(a.t)
	a.mu.Lock()
	a.t.Logf("holds checked: %d %v, faults injected: %d", a.holds.Load(), a.byOwner, a.faults.Load())
	a.mu.Unlock()
	require.Empty(a.t, v, "violations")
}

// leftovers returns, per master, the keys matching pattern that are still there:
// every key without a TTL, and every other key but the waiters' own (fair
// queues and exclusive waiters' markers, which their heartbeat TTL removes).
func (a *atk) leftovers(pattern string) map[string][]string {
	out := map[string][]string{}
	ctx := context.Background()
	for _, s := range a.c.Servers {
		ks, err := s.Client().Keys(ctx, pattern).Result()
		require.NoError(a.t, err)
		for _, k := range ks {
			waiters := sideName(k) || strings.HasSuffix(k, xwaitSuffix) // a waiter's queue, flag or marker
			if !waiters || s.Client().PTTL(ctx, k).Val() == -1 {        // -1: no TTL
				out[s.Name] = append(out[s.Name], k)
			}
		}
	}
	return out
}

// atkWorkers runs fn in n goroutines until ctx ends, and waits for them. Worker
// i draws from its own generator, seeded from seed and i.
func atkWorkers(ctx context.Context, n int, seed uint64, fn func(ctx context.Context, i int, rng *rand.Rand)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(i+1)))
			for ctx.Err() == nil {
				fn(ctx, i, rng)
			}
		}()
	}
	wg.Wait()
}

// clients returns n clients named prefix0, prefix1, ... (see client).
func (a *atk) clients(prefix string, n int, opts ...Option) ([]string, []*Manager) {
	var names []string
	var ms []*Manager
	for i := range n {
		name := fmt.Sprintf("%s%d", prefix, i)
		names = append(names, name)
		ms = append(ms, a.client(name, opts...))
	}
	return names, ms
}

// workload runs one goroutine per client for atkDuration under the nemesis (the
// clients' links are names'): each takes a hold with take (under a context
// cancelled at a random point), records it, keeps it a random time up to hold
// and releases it, and checks the history at the end. take returns the lock and
// its kind (as for hold); a nil lock with a nil error is a hold take handled
// itself.
func (a *atk) workload(seed uint64, ttl, hold time.Duration, names []string,
	take func(ctx context.Context, rng *rand.Rand, i int) (*Lock, string, error)) {
	ctx, cancel := context.WithTimeout(context.Background(), atkDuration())
	defer cancel()
	waitNemesis := a.startNemesis(ctx, rand.New(rand.NewPCG(seed, 0)), ttl, names)
	atkWorkers(ctx, len(names), seed, func(ctx context.Context, i int, rng *rand.Rand) {
		actx, stop := randCtx(ctx, rng, 2*ttl)
		l, kind, err := take(actx, rng, i)
		returned := time.Now()
		stop()
		a.typedOrCancelled(names[i], err)
		if l == nil {
			atkSleep(ctx, time.Duration(rng.Int64N(int64(ttl/4))))
			return
		}
		a.holdFor(rng, names[i], l, returned, kind, time.Duration(rng.Int64N(int64(hold))))
	})
	cancel()
	waitNemesis()
	a.check()
}

// held checks what the masters really hold right after an acquisition returned:
// read directly (not through the client's proxies), the masters that answer
// within 50ms and show someone else's keys, or none of ours, must leave room for
// a quorum of ours among the rest. A read that ends after the lock's Until proves
// nothing and is skipped. kind as for hold.
func (a *atk) held(owner string, l *Lock, kind string) {
	keys := []string{l.Key()}
	if kind == "multi" {
		keys = keys[:0]
		for _, n := range namesOf(l) {
			keys = append(keys, l.m.Key(n))
		}
	}
	notOurs := 0
	for _, s := range a.c.Servers {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		ours, known := true, true
		for _, k := range keys {
			if kind == "shared" {
				_, err := s.Client().ZScore(ctx, k, l.Token()).Result()
				switch {
				case errors.Is(err, redis.Nil), err != nil && strings.HasPrefix(err.Error(), "WRONGTYPE"):
					ours = false
				case err != nil:
					known = false
				}
				continue
			}
			v, err := s.Client().Get(ctx, k).Result()
			switch {
			case errors.Is(err, redis.Nil), err == nil && v != l.Token(), err != nil && strings.HasPrefix(err.Error(), "WRONGTYPE"):
				ours = false
			case err != nil:
				known = false
			}
		}
		cancel()
		if known && !ours {
			notOurs++
		}
	}
	if time.Now().Before(l.Until()) && len(a.c.Servers)-notOurs < len(a.c.Servers)/2+1 {
		a.rec.Violate("not-held", "%s: %s acquired, but %d of %d masters do not hold it", owner, l.Name(), notOurs, len(a.c.Servers))
	}
}
