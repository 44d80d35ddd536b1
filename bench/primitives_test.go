package bench

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/quorum"
)

// primitiveGoroutines are the concurrency levels of BenchmarkPrimitives.
var primitiveGoroutines = []int{1, 8, 64}

// primitiveCyclers are the cycles of BenchmarkPrimitives, one Manager each: the
// plain lock, and each primitive taken and given back on a name of its own
// (one round to take it, one to give it back, unless said otherwise).
var primitiveCyclers = []struct {
	name string
	make func(m *quorum.Manager) cycler
}{
	{"lock", func(m *quorum.Manager) cycler { return tryCycler(m) }},
	{"sem-1", func(m *quorum.Manager) cycler { return semCycler(m, 1) }},
	{"sem-4", func(m *quorum.Manager) cycler { return semCycler(m, 4) }},
	{"multi-3", func(m *quorum.Manager) cycler {
		return holdCycler(func(ctx context.Context, key string) (*quorum.Lock, error) {
			mu, err := m.Multi(key+":a", key+":b", key+":c")
			if err != nil {
				return nil, err
			}
			return mu.TryAcquire(ctx, benchTTL)
		})
	}},
	{"shared", func(m *quorum.Manager) cycler {
		return holdCycler(func(ctx context.Context, key string) (*quorum.Lock, error) {
			sh, err := m.Shared(key)
			if err != nil {
				return nil, err
			}
			return sh.TryAcquire(ctx, benchTTL)
		})
	}},
	// Campaign takes the leadership (a plain round), reads the term counter and
	// raises it with the leader's record (two rounds), and starts the keep-alive;
	// Release stops it and resigns (one round).
	{"election", func(m *quorum.Manager) cycler {
		return func(ctx context.Context, key string) error {
			e, err := m.Election(key)
			if err != nil {
				return err
			}
			l, err := e.Campaign(ctx, "10.0.0.1:8080", benchTTL)
			if err != nil {
				return err
			}
			return l.Release(ctx)
		}
	}},
}

// tryCycler is one TryAcquire with opts and its Release.
func tryCycler(m *quorum.Manager, opts ...quorum.LockOption) cycler {
	return func(ctx context.Context, key string) error {
		l, err := m.TryAcquire(ctx, key, benchTTL, opts...)
		if err != nil {
			return err
		}
		return l.Release(ctx)
	}
}

// semCycler is one TryAcquire of a permit of a semaphore of n and its Release.
func semCycler(m *quorum.Manager, n int) cycler {
	return holdCycler(func(ctx context.Context, key string) (*quorum.Permit, error) {
		sem, err := m.Semaphore(key, n)
		if err != nil {
			return nil, err
		}
		return sem.TryAcquire(ctx, benchTTL)
	})
}

// holdCycler is one hold that take takes of the cycle's name, and its Release.
func holdCycler[H interface{ Release(context.Context) error }](take func(ctx context.Context, key string) (H, error)) cycler {
	return func(ctx context.Context, key string) error {
		h, err := take(ctx, key)
		if err != nil {
			return err
		}
		return h.Release(ctx)
	}
}

// primitiveResult is one row of BenchmarkPrimitives.
type primitiveResult struct {
	distinctResult
	allocs float64 // heap allocations per cycle (warm-up included: g cycles)
}

// BenchmarkPrimitives: the plain lock and each primitive (a semaphore of 1 and of
// 4 permits, a multi-name lock of 3 names, a shared hold, an election's
// campaign and resignation) at 1, 8 and 64 goroutines, each cycling a name of its
// own, side by side on the same five local masters; measured as
// BenchmarkDistinctKeys measures (cycles/s, p50, p99, this process's and the
// servers' CPU time per cycle) and with the allocations per cycle. Run it with:
//
//	go -C bench test . -run '^$' -bench Primitives -benchtime 2s
func BenchmarkPrimitives(b *testing.B) {
	c := redistest.Start(b, 5, redistest.Options{})
	addrs := c.Addrs()
	infos := make([]*redis.Client, len(c.Servers))
	for i, s := range c.Servers {
		infos[i] = s.Client()
	}
	contenders := make([]contender, len(primitiveCyclers))
	for i, pc := range primitiveCyclers {
		contenders[i] = sharedContender(pc.name, pc.make(benchManager(b, addrs)))
	}
	results := map[string]primitiveResult{} // by "g/name"
	for _, g := range primitiveGoroutines {
		b.Run("g="+strconv.Itoa(g), func(b *testing.B) {
			for _, ct := range contenders {
				b.Run(ct.name, func(b *testing.B) {
					var ms0, ms1 runtime.MemStats
					runtime.ReadMemStats(&ms0)
					r := runDistinct(b, ct, g, infos)
					runtime.ReadMemStats(&ms1)
					results[strconv.Itoa(g)+"/"+ct.name] = primitiveResult{r, float64(ms1.Mallocs-ms0.Mallocs) / float64(b.N)}
				})
			}
		})
	}
	b.Log(primitiveTable(results, contenders))
}

// primitiveTable prints the rows of BenchmarkPrimitives, each with its cycles/s
// as a fraction of the plain lock's at the same concurrency.
func primitiveTable(results map[string]primitiveResult, contenders []contender) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "\n%3s  %-9s %9s %7s %9s %9s %8s %8s %11s %6s\n", "g", "cycle", "cycles/s", "x lock", "p50", "p99", "allocs", "cpu/op", "srv-cpu/op", "errors")
	for _, g := range primitiveGoroutines {
		lock, hasLock := results[strconv.Itoa(g)+"/lock"]
		for _, ct := range contenders {
			r, ok := results[strconv.Itoa(g)+"/"+ct.name]
			if !ok {
				continue
			}
			rel := "-"
			if hasLock && lock.rate > 0 {
				rel = fmt.Sprintf("%.2f", r.rate/lock.rate)
			}
			fmt.Fprintf(&sb, "%3d  %-9s %9.0f %7s %9v %9v %8.1f %8v %11v %6d\n", g, ct.name, r.rate, rel,
				r.p50.Round(time.Microsecond), r.p99.Round(time.Microsecond), r.allocs,
				r.cpu.Round(100*time.Nanosecond), r.srvCPU.Round(100*time.Nanosecond), r.errors)
		}
	}
	return sb.String()
}
