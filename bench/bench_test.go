package bench

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"

	experiment "github.com/redlock/redlock/internal/bench"
	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/quorum"
)

// The benchmarks compare, in one run on the same five local masters, this project
// against redsync (test files only: redsync is never imported by product code) and
// against the floor (one hand-multiplexed SET NX PX round plus one release round).
// Run them with:
//
//	go -C bench test . -run '^$' -bench . -benchtime 3s

const benchTTL = 10 * time.Second

// cycler runs one acquire+release cycle of key.
type cycler func(ctx context.Context, key string) error

// latencies records per-cycle latencies and reports p50 and p99 as metrics.
type latencies struct {
	mu sync.Mutex
	ns []int64
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	l.ns = append(l.ns, d.Nanoseconds())
	l.mu.Unlock()
}

func (l *latencies) report(b *testing.B) (p50 time.Duration) {
	slices.Sort(l.ns)
	p50 = time.Duration(experiment.Percentile(l.ns, 0.5))
	b.ReportMetric(float64(p50.Microseconds()), "p50-µs")
	b.ReportMetric(float64(time.Duration(experiment.Percentile(l.ns, 0.99)).Microseconds()), "p99-µs")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cycles/s")
	return p50
}

// benchManager returns a Manager over the masters at addrs (named a, b, ...) with
// the benchmarks' settings, closed when the test ends.
func benchManager(tb testing.TB, addrs []string, opts ...quorum.Option) *quorum.Manager {
	nodes := make([]quorum.Node, len(addrs))
	for i, a := range addrs {
		nodes[i] = quorum.Node{Name: string(rune('a' + i)), Addr: a}
	}
	m, err := quorum.New(nodes, append([]quorum.Option{quorum.WithRestartQuarantine(0), quorum.WithNodeTimeout(benchNodeTimeout)}, opts...)...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = m.Close() })
	return m
}

func quorumCycler(b testing.TB, addrs []string, opts ...quorum.Option) cycler {
	m := benchManager(b, addrs, opts...)
	return func(ctx context.Context, key string) error {
		l, err := m.TryAcquire(ctx, key, benchTTL)
		if err != nil {
			return err
		}
		return l.Release(ctx)
	}
}

func redsyncPools(b testing.TB, addrs []string) *redsync.Redsync {
	var pools []redsyncredis.Pool
	for _, a := range addrs {
		c := redis.NewClient(&redis.Options{Addr: a})
		b.Cleanup(func() { _ = c.Close() })
		pools = append(pools, goredis.NewPool(c))
	}
	return redsync.New(pools...)
}

func redsyncCycler(b testing.TB, addrs []string) cycler {
	rs := redsyncPools(b, addrs)
	return func(ctx context.Context, key string) error {
		mu := rs.NewMutex(key, redsync.WithExpiry(benchTTL), redsync.WithTries(1))
		if err := mu.LockContext(ctx); err != nil {
			return err
		}
		_, err := mu.UnlockContext(ctx)
		return err
	}
}

func floorCycler(b *testing.B, addrs []string) cycler {
	f, err := DialFloor(addrs, time.Second)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = f.Close() })
	var mu sync.Mutex // the floor is one multiplexed connection set
	return func(_ context.Context, key string) error {
		mu.Lock()
		defer mu.Unlock()
		n, err := f.Cycle(key, "floor-value-0123456789abcdef", benchTTL)
		if err == nil && n < len(addrs)/2+1 {
			err = fmt.Errorf("floor: %d grants", n)
		}
		return err
	}
}

// BenchmarkUncontended: one client, one key, acquire+release cycles back to back.
func BenchmarkUncontended(b *testing.B) {
	c := redistest.Start(b, 5, redistest.Options{})
	addrs := c.Addrs()
	runners := []struct {
		name string
		cyc  cycler
	}{
		{"floor", floorCycler(b, addrs)},
		{"quorum", quorumCycler(b, addrs)},
		{"redsync", redsyncCycler(b, addrs)},
	}
	p50 := map[string]time.Duration{}
	rate := map[string]float64{}
	for _, r := range runners {
		b.Run(r.name, func(b *testing.B) {
			ctx := context.Background()
			for range 50 { // warm connections and script caches
				if err := r.cyc(ctx, "bench:warm"); err != nil {
					b.Fatal(err)
				}
			}
			var lat latencies
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if err := r.cyc(ctx, "bench:uncontended"); err != nil {
					b.Fatal(err)
				}
				lat.add(time.Since(t0))
			}
			b.StopTimer()
			p50[r.name] = lat.report(b)
			rate[r.name] = float64(b.N) / b.Elapsed().Seconds()
		})
	}
	if rate["redsync"] > 0 && p50["floor"] > 0 {
		b.Logf("quorum/redsync cycles/s = %.2f (goal >= 1.5); quorum/floor p50 = %.2f (goal <= 1.5)",
			rate["quorum"]/rate["redsync"], float64(p50["quorum"])/float64(p50["floor"]))
	}
}
