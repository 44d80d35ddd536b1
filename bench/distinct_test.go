package bench

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	experiment "github.com/redlock/redlock/internal/bench"
	"github.com/redlock/redlock/internal/redistest"
)

// distinctGoroutines are the concurrency levels of BenchmarkDistinctKeys.
var distinctGoroutines = []int{1, 8, 64, 256}

// A contender is one client under test in BenchmarkDistinctKeys. forGoroutine(i)
// returns the cycler that goroutine i uses: the same one for every goroutine when
// the client is shared (a lock manager, a connection pool), goroutine i's own one
// for the floor (one connection set per goroutine, it is not safe for concurrent
// use). prepare(n), when set, readies the first n goroutines' connections before
// the timer starts.
type contender struct {
	name         string
	prepare      func(n int) error
	forGoroutine func(i int) cycler
}

func sharedContender(name string, c cycler) contender {
	return contender{name: name, forGoroutine: func(int) cycler { return c }}
}

// extraContenders lets a file that is not committed add a client to
// BenchmarkDistinctKeys for a one-off comparison (an older revision of the lock
// client, say) without touching this one.
var extraContenders []func(tb testing.TB, addrs []string) contender

// floorSet is the floor for many goroutines: one Floor (one raw connection per
// master) per goroutine, dialled ahead by prepare.
type floorSet struct {
	addrs  []string
	floors []*Floor
}

func newFloorSet(b *testing.B, addrs []string) *floorSet {
	s := &floorSet{addrs: addrs}
	b.Cleanup(func() {
		for _, f := range s.floors {
			_ = f.Close()
		}
	})
	return s
}

func (s *floorSet) prepare(n int) error {
	for len(s.floors) < n {
		f, err := DialFloor(s.addrs, time.Second)
		if err != nil {
			return err
		}
		s.floors = append(s.floors, f)
	}
	return nil
}

func (s *floorSet) cycler(i int) cycler {
	f, quorum := s.floors[i], len(s.addrs)/2+1
	return func(_ context.Context, key string) error {
		n, err := f.Cycle(key, "floor-value-0123456789abcdef", benchTTL)
		if err == nil && n < quorum {
			err = fmt.Errorf("floor: %d grants", n)
		}
		return err
	}
}

// distinctResult is what one sub-benchmark of BenchmarkDistinctKeys measured (its
// last, longest run).
type distinctResult struct {
	rate     float64 // cycles per second
	p50, p99 time.Duration
	cpu      time.Duration // this process's CPU time (user+system) per cycle
	srvCPU   time.Duration // the five redis-servers' CPU time per cycle
	depth    float64       // the cycle's commands per read at a master (batch depth)
	reads    float64       // reads at one master (the mean) per 20,000 cycles
	errors   int64
}

// BenchmarkDistinctKeys: 1, 8, 64 and 256 goroutines, each cycling (acquire +
// release) its own key, for this project, redsync, the floor, and the prototypes
// of pipelined_test.go (plain go-redis, go-redis's AutoPipeline, rueidis), side
// by side on the same five local masters. Besides cycles/s, p50 and p99 it reports
// allocations, this process's CPU time per cycle (cpu-µs/op) and the servers' own
// (srv-cpu-µs/op, from INFO cpu). Run it with:
//
//	go -C bench test . -run '^$' -bench DistinctKeys -benchtime 2s
//
// and one concurrency level or client with, e.g., -bench 'DistinctKeys/g=64$/rueidis'.
func BenchmarkDistinctKeys(b *testing.B) {
	c := redistest.Start(b, 5, redistest.Options{})
	addrs := c.Addrs()
	floors := newFloorSet(b, addrs)
	contenders := []contender{
		{name: "floor", prepare: floors.prepare, forGoroutine: floors.cycler},
		sharedContender("quorum", quorumCycler(b, addrs)),
		sharedContender("redsync", redsyncCycler(b, addrs)),
	}
	for _, p := range prototypes {
		contenders = append(contenders, sharedContender(p.name, p.make(b, addrs, nil)))
	}
	for _, extra := range extraContenders {
		contenders = append(contenders, extra(b, addrs))
	}
	infos := make([]*redis.Client, len(c.Servers))
	for i, s := range c.Servers {
		infos[i] = s.Client()
	}

	results := map[string]distinctResult{} // by "g/name"
	for _, g := range distinctGoroutines {
		b.Run("g="+strconv.Itoa(g), func(b *testing.B) {
			for _, ct := range contenders {
				b.Run(ct.name, func(b *testing.B) {
					results[strconv.Itoa(g)+"/"+ct.name] = runDistinct(b, ct, g, infos)
				})
			}
		})
	}

	var sb strings.Builder
	fmt.Fprintf(&sb, "\n%5s  %-22s %10s %9s %9s %8s %12s %9s %9s %7s\n", "g", "client", "cycles/s", "p50", "p99", "cpu/op", "srv-cpu/op", "cmds/read", "reads/20k", "errors")
	for _, g := range distinctGoroutines {
		for _, ct := range contenders {
			r, ok := results[strconv.Itoa(g)+"/"+ct.name]
			if !ok {
				continue
			}
			fmt.Fprintf(&sb, "%5d  %-22s %10.0f %9v %9v %8v %12v %9.1f %9.0f %7d\n", g, ct.name, r.rate, r.p50.Round(time.Microsecond),
				r.p99.Round(time.Microsecond), r.cpu.Round(100*time.Nanosecond), r.srvCPU.Round(100*time.Nanosecond), r.depth, r.reads, r.errors)
		}
	}
	for _, g := range distinctGoroutines {
		q, okq := results[strconv.Itoa(g)+"/quorum"]
		rs, okr := results[strconv.Itoa(g)+"/redsync"]
		if okq && okr && rs.rate > 0 {
			fmt.Fprintf(&sb, "%d goroutines, distinct keys: quorum/redsync cycles/s = %.2f\n", g, q.rate/rs.rate)
		}
	}
	q, okq := results["1/quorum"]
	f, okf := results["1/floor"]
	if okq && okf && f.p50 > 0 {
		fmt.Fprintf(&sb, "1 goroutine: quorum p50 / floor p50 = %.2f\n", float64(q.p50)/float64(f.p50))
	}
	b.Log(sb.String())
}

// runDistinct runs b.N cycles spread over g goroutines, each on its own key.
func runDistinct(b *testing.B, ct contender, g int, infos []*redis.Client) distinctResult {
	ctx := context.Background()
	if ct.prepare != nil {
		if err := ct.prepare(g); err != nil {
			b.Fatal(err)
		}
	}
	cycs := make([]cycler, g)
	keys := make([]string, g)
	lats := make([][]int64, g)
	for i := range g {
		cycs[i] = ct.forGoroutine(i)
		keys[i] = "bench:distinct:" + ct.name + ":" + strconv.Itoa(i)
		lats[i] = make([]int64, 0, b.N/g+1)
	}
	// Warm every goroutine's connections (and a pool's size) at this concurrency.
	if err := forEach(g, func(i int) error { return cycs[i](ctx, keys[i]) }); err != nil {
		b.Fatalf("warm-up: %v", err)
	}

	var next, errs atomic.Int64
	var firstErr error
	var errOnce sync.Once
	srv0 := serversCPU(b, infos)
	io0 := serversIO(b, infos)
	cpu0 := processCPU()
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	for i := range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cyc, key, lat := cycs[i], keys[i], lats[i]
			for next.Add(1) <= int64(b.N) {
				t0 := time.Now()
				if err := cyc(ctx, key); err != nil {
					errs.Add(1)
					errOnce.Do(func() { firstErr = err })
					continue
				}
				lat = append(lat, int64(time.Since(t0)))
			}
			lats[i] = lat
		}()
	}
	wg.Wait()
	b.StopTimer()
	cpu := processCPU() - cpu0
	srv := serversCPU(b, infos) - srv0
	io := serversIO(b, infos).minus(io0)

	var all []int64
	for _, l := range lats {
		all = append(all, l...)
	}
	slices.Sort(all)
	r := distinctResult{
		rate:   float64(b.N) / b.Elapsed().Seconds(),
		p50:    time.Duration(experiment.Percentile(all, 0.50)),
		p99:    time.Duration(experiment.Percentile(all, 0.99)),
		cpu:    cpu / time.Duration(b.N),
		srvCPU: srv / time.Duration(b.N),
		errors: errs.Load(),
	}
	if io.reads > 0 {
		// Every client sends two commands per master and cycle (SET NX, then the
		// release script); INFO's own count includes the scripts' calls.
		r.depth = float64(2*b.N*len(infos)) / float64(io.reads)
		r.reads = float64(io.reads) / float64(len(infos)) * 20000 / float64(b.N)
	}
	b.ReportMetric(r.rate, "cycles/s")
	b.ReportMetric(float64(r.p50)/1e3, "p50-µs")
	b.ReportMetric(float64(r.p99)/1e3, "p99-µs")
	b.ReportMetric(float64(r.cpu)/1e3, "cpu-µs/op")
	b.ReportMetric(float64(r.srvCPU)/1e3, "srv-cpu-µs/op")
	b.ReportMetric(r.depth, "cmds/read")
	b.ReportMetric(r.reads, "reads/20k")
	if r.errors > 0 {
		b.ReportMetric(float64(r.errors), "errors")
		b.Logf("%d of %d cycles failed; first: %v", r.errors, b.N, firstErr)
		if r.errors*100 > int64(b.N) {
			b.Errorf("more than 1%% of the cycles failed")
		}
	}
	return r
}

// forEach runs f(0) .. f(n-1) concurrently and returns the first error.
func forEach(n int, f func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(i)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// serversCPU sums used_cpu_user and used_cpu_sys of INFO cpu over the servers.
func serversCPU(tb testing.TB, infos []*redis.Client) time.Duration {
	var total time.Duration
	for _, c := range infos {
		s, err := c.Info(context.Background(), "cpu").Result()
		if err != nil {
			tb.Fatalf("INFO cpu: %v", err)
		}
		total += parseServerCPU(s)
	}
	return total
}

// serverIO is what the servers read: the reads from their clients' sockets
// (INFO stats), summed over the servers. Commands per read is the batch depth a
// server sees.
type serverIO struct{ reads int64 }

func (a serverIO) minus(b serverIO) serverIO { return serverIO{a.reads - b.reads} }

// serversIO sums total_reads_processed of INFO stats over the servers.
func serversIO(tb testing.TB, infos []*redis.Client) serverIO {
	var total serverIO
	for _, c := range infos {
		s, err := c.Info(context.Background(), "stats").Result()
		if err != nil {
			tb.Fatalf("INFO stats: %v", err)
		}
		total.reads += infoInt(s, "total_reads_processed")
	}
	return total
}

// infoInt returns the integer field of an INFO reply, 0 when absent.
func infoInt(info, field string) int64 {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

// parseServerCPU returns used_cpu_user + used_cpu_sys of an INFO cpu reply.
func parseServerCPU(info string) time.Duration {
	var total time.Duration
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || (k != "used_cpu_user" && k != "used_cpu_sys") {
			continue
		}
		if secs, err := strconv.ParseFloat(v, 64); err == nil {
			total += time.Duration(secs * float64(time.Second))
		}
	}
	return total
}

func TestParseServerCPU(t *testing.T) {
	info := "# CPU\r\nused_cpu_sys:1.500000\r\nused_cpu_user:0.250000\r\nused_cpu_sys_children:9.000000\r\n"
	if got, want := parseServerCPU(info), 1750*time.Millisecond; got != want {
		t.Fatalf("parseServerCPU = %v, want %v", got, want)
	}
}
