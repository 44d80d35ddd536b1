package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	experiment "github.com/redlock/redlock/internal/bench"
	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/quorum"
)

// Environment of a worker process (this test binary, re-executed).
const (
	envWorker  = "REDLOCK_BENCH_WORKER" // "quorum-plain", "quorum-fair" or "redsync"
	envAddrs   = "REDLOCK_BENCH_ADDRS"
	envOps     = "REDLOCK_BENCH_OPS"
	envClients = "REDLOCK_BENCH_CLIENTS" // process counts of BenchmarkContention, "1,3,5"
	envStart   = "REDLOCK_BENCH_START"
	envID      = "REDLOCK_BENCH_ID"
)

// benchNodeTimeout is roomier than the default 50ms: the benchmark machines are
// shared, and a scheduling hiccup must not count as a master failure.
const benchNodeTimeout = 250 * time.Millisecond

// contentionOps is the number of acquisitions per process (REDLOCK_BENCH_OPS, default 50).
func contentionOps() int {
	if n, err := strconv.Atoi(os.Getenv(envOps)); err == nil && n > 0 {
		return n
	}
	return 50
}

// contentionClients are the process counts of BenchmarkContention, one
// sub-benchmark each (REDLOCK_BENCH_CLIENTS, comma-separated, default "1,3,5":
// the rows of the thesis's tables 1 and 2).
func contentionClients() ([]int, error) {
	v := os.Getenv(envClients)
	if v == "" {
		return []int{1, 3, 5}, nil
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%s=%q: want process counts like 1,3,5", envClients, v)
		}
		out = append(out, n)
	}
	return out, nil
}

// workerTimeout bounds one worker process: generous, it only stops a hung run.
func workerTimeout(ops, clients int) time.Duration {
	return 5*time.Minute + time.Duration(ops*clients)*20*time.Millisecond
}

// acquirerFor returns the lock client of a worker: this project in plain or fair
// mode with its default retry policy, or redsync with its defaults. rec, when not
// nil, records the path of every call (for this project: its Observer).
func acquirerFor(kind string, addrs []string, rec *pathRecorder) (experiment.Acquirer, func(), error) {
	const key, name = "lock:bench-contended", "bench-contended"
	switch kind {
	case "quorum-plain", "quorum-fair":
		nodes := make([]quorum.Node, len(addrs))
		for i, a := range addrs {
			nodes[i] = quorum.Node{Name: string(rune('a' + i)), Addr: a}
		}
		mopts := []quorum.Option{quorum.WithRestartQuarantine(0), quorum.WithNodeTimeout(benchNodeTimeout)}
		if rec != nil {
			mopts = append(mopts, quorum.WithObserver(rec))
		}
		m, err := quorum.New(nodes, mopts...)
		if err != nil {
			return nil, nil, err
		}
		var opts []quorum.LockOption
		if kind == "quorum-fair" {
			opts = append(opts, quorum.WithFair())
		}
		acquire := func(ctx context.Context) (func(), error) {
			l, err := m.Acquire(ctx, name, 8*time.Second, opts...)
			if err != nil {
				return nil, err
			}
			return func() { _ = l.Release(context.Background()) }, nil
		}
		if rec != nil {
			acquire = rec.wrap(acquire)
		}
		return acquire, func() { _ = m.Close() }, nil
	case "redsync":
		var pools []redsyncredis.Pool
		var clients []*redis.Client
		for _, a := range addrs {
			c := redis.NewClient(&redis.Options{Addr: a})
			clients = append(clients, c)
			pools = append(pools, goredis.NewPool(c))
		}
		rs := redsync.New(pools...)
		var acquire experiment.Acquirer = func(ctx context.Context) (func(), error) {
			mu := rs.NewMutex(key) // redsync's defaults: 8s expiry, 32 tries, 50-250ms apart
			if err := mu.LockContext(ctx); err != nil {
				return nil, err
			}
			return func() { _, _ = mu.UnlockContext(context.Background()) }, nil
		}
		if rec != nil {
			acquire = rec.wrap(acquire)
		}
		return acquire, func() {
			for _, c := range clients {
				_ = c.Close()
			}
		}, nil
	}
	return nil, nil, fmt.Errorf("unknown worker kind %q", kind)
}

// TestContentionWorker is one process of BenchmarkContention; it does nothing
// unless started by it. It prints an experiment.WorkerResult and exits at once (so that the
// test framework prints nothing after it).
func TestContentionWorker(t *testing.T) {
	kind := os.Getenv(envWorker)
	if kind == "" {
		return
	}
	addrs := strings.Split(os.Getenv(envAddrs), ",")
	rec := &pathRecorder{masters: len(addrs)}
	acquire, closeFn, err := acquirerFor(kind, addrs, rec)
	require.NoError(t, err)
	startNS, err := strconv.ParseInt(os.Getenv(envStart), 10, 64)
	require.NoError(t, err)
	clients, _ := strconv.Atoi(os.Getenv(envClients))
	ctx, cancel := context.WithTimeout(context.Background(), workerTimeout(contentionOps(), max(clients, 1)))
	defer cancel()
	// Warm the connections before the common start.
	if rel, err := acquire(ctx); err == nil {
		rel()
	}
	rec.paths = nil
	require.NoError(t, experiment.SleepUntil(ctx, time.Unix(0, startNS)))
	require.NoError(t, leavePid(os.Getenv(envID)))
	res := experiment.Work(ctx, os.Getenv(envID), acquire, contentionOps(), 0)
	closeFn()
	require.NoError(t, rec.save(os.Getenv(envID)))
	if traceSave != nil {
		require.NoError(t, traceSave(os.Getenv(envID)))
	}
	require.NoError(t, json.NewEncoder(os.Stdout).Encode(res))
	os.Exit(0)
}

// runContention runs the experiment with clients worker processes of kind.
func runContention(tb testing.TB, kind string, addrs []string, clients int) (experiment.Summary, pathsRun) {
	tb.Helper()
	masters := watchMasters(tb, addrs)
	mq := masters.sampleQueues()
	results, run := runWorkers(tb, mq, "TestContentionWorker", clients, envWorker+"="+kind, envAddrs+"="+strings.Join(addrs, ","),
		envOps+"="+strconv.Itoa(contentionOps()), envClients+"="+strconv.Itoa(clients))
	run.qwait = mq.finish()
	run.waited = masters.finish(clients*contentionOps()) + "\n" + workersSched(results)
	return experiment.Summarize(kind, contentionOps(), results), run
}

// runWorkers runs clients worker processes (this test binary, running only test)
// with env besides the common start and their ids, and returns their results and
// the paths of their calls; mq, when not nil, samples the workers' run-queue waits
// too.
func runWorkers(tb testing.TB, mq *qsampler, test string, clients int, env ...string) ([]experiment.WorkerResult, pathsRun) {
	tb.Helper()
	var results []experiment.WorkerResult
	dir := tb.TempDir()
	mq.watch(dir)
	run, err := withPaths(dir, func(pathsEnv string) {
		start := experiment.StartAt(clients)
		cmds := make([]*exec.Cmd, clients)
		for i := range cmds {
			c := exec.Command(os.Args[0], "-test.run=^"+test+"$")
			c.Env = append(append(os.Environ(), env...), pathsEnv,
				envStart+"="+strconv.FormatInt(start.UnixNano(), 10), envID+"=p"+strconv.Itoa(i+1))
			cmds[i] = c
		}
		var err error
		results, err = experiment.RunProcesses(context.Background(), cmds, os.Stderr)
		require.NoError(tb, err)
	})
	require.NoError(tb, err)
	return results, run
}

// thesisRow is one row of tables 1 and 2 of the fair-lock thesis (seeds, document
// 003): N processes each took one shared lock 5000 times; mean and maximum wait of
// the old algorithm (random back-off, like redsync) and the new one (FIFO queue).
// The printed max columns appear swapped (the text says the old algorithm's max
// reaches minutes and the new one's stays under a second).
type thesisRow struct {
	procs            int
	meanOld, meanNew time.Duration
	maxOld, maxNew   time.Duration
}

var thesisRows = []thesisRow{
	{1, 25 * time.Millisecond, 15 * time.Millisecond, 146 * time.Millisecond, 39 * time.Millisecond},
	{3, 53 * time.Millisecond, 56 * time.Millisecond, 537 * time.Millisecond, 155817 * time.Millisecond},
	{5, 107 * time.Millisecond, 106 * time.Millisecond, 605 * time.Millisecond, 502441 * time.Millisecond},
}

// BenchmarkContention: N processes (REDLOCK_BENCH_CLIENTS, default 1, 3 and 5,
// one sub-benchmark each) take one lock REDLOCK_BENCH_OPS times each (default 50),
// holding it for no time, for this project in plain mode (wake-ups), in fair mode
// (FIFO queue) and redsync with its defaults. Run it once; the thesis's experiment
// (5000 acquisitions per process) is
//
//	REDLOCK_BENCH_OPS=5000 go -C bench test . -run '^$' -bench Contention -benchtime 1x -timeout 90m -v
func BenchmarkContention(b *testing.B) {
	procs, err := contentionClients()
	if err != nil {
		b.Fatal(err)
	}
	c := redistest.Start(b, 5, redistest.Options{})
	kinds := []string{"quorum-plain", "quorum-fair", "redsync"}
	sums := map[string]experiment.Summary{} // by "procs/kind"
	for _, n := range procs {
		b.Run("procs="+strconv.Itoa(n), func(b *testing.B) {
			for _, kind := range kinds {
				b.Run(kind, func(b *testing.B) {
					var s experiment.Summary
					var run pathsRun
					for i := 0; i < b.N; i++ {
						s, run = runContention(b, kind, c.Addrs(), n)
					}
					b.ReportMetric(s.PerSecond, "acq/s")
					b.ReportMetric(ms(s.MeanWait), "mean-ms")
					b.ReportMetric(ms(s.P99Wait), "p99-ms")
					b.ReportMetric(ms(s.P999Wait), "p99.9-ms")
					b.ReportMetric(ms(s.MaxWait), "max-ms")
					b.ReportMetric(100*s.MinOthersAtFinish, "others-done-%")
					var sb strings.Builder
					_ = s.WriteText(&sb)
					b.Log("\n" + sb.String() + "the longest waits:\n" + run.explain(3))
					sums[strconv.Itoa(n)+"/"+kind] = s
				})
			}
			plain, fair, rs := sums[strconv.Itoa(n)+"/quorum-plain"], sums[strconv.Itoa(n)+"/quorum-fair"], sums[strconv.Itoa(n)+"/redsync"]
			if n > 1 && rs.Total > 0 && fair.MeanWait > 0 && rs.MaxWait > 0 && rs.PerSecond > 0 {
				b.Logf("%d processes: fair max/mean = %.2f (goal <= 3); fair max / redsync max = %.3f (goal <= 0.2); "+
					"fair: others done when the first finished = %.0f%% (goal >= 80%%); plain/redsync acquisitions/s = %.2f (goal >= 1)",
					n, float64(fair.MaxWait)/float64(fair.MeanWait), float64(fair.MaxWait)/float64(rs.MaxWait),
					100*fair.MinOthersAtFinish, plain.PerSecond/rs.PerSecond)
			}
		})
	}
	b.Log("\n" + thesisTable(procs, contentionOps(), sums))
}

// thesisTable sets the measured mean and max waits beside the thesis's.
func thesisTable(procs []int, ops int, sums map[string]experiment.Summary) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d acquisitions per process (the thesis: 5000). mean / max wait:\n", ops)
	fmt.Fprintf(&sb, "%5s  %-24s %-24s %-22s %-22s %-22s\n", "procs", "thesis old (back-off)", "thesis new (queue)", "quorum plain", "quorum fair", "redsync")
	for _, n := range procs {
		row := fmt.Sprintf("%5d  ", n)
		thesis := "-"
		for _, t := range thesisRows {
			if t.procs == n {
				thesis = fmt.Sprintf("%-24s %-24s", fmt.Sprintf("%v / %v", t.meanOld, t.maxOld), fmt.Sprintf("%v / %v", t.meanNew, t.maxNew))
			}
		}
		if thesis == "-" {
			thesis = fmt.Sprintf("%-24s %-24s", "-", "-")
		}
		row += thesis
		for _, kind := range []string{"quorum-plain", "quorum-fair", "redsync"} {
			s, ok := sums[strconv.Itoa(n)+"/"+kind]
			cell := "-"
			if ok && s.Total > 0 {
				cell = fmt.Sprintf("%v / %v", experiment.Round(s.MeanWait), experiment.Round(s.MaxWait))
			}
			row += fmt.Sprintf(" %-22s", cell)
		}
		sb.WriteString(row + "\n")
	}
	return sb.String()
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func TestFloorCycle(t *testing.T) {
	c := redistest.Start(t, 3, redistest.Options{})
	f, err := DialFloor(c.Addrs(), time.Second)
	require.NoError(t, err)
	defer f.Close()
	n, err := f.Cycle("floor:k", "v", time.Second)
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	for _, s := range c.Servers {
		assert.Zero(t, s.Client().Exists(context.Background(), "floor:k").Val(), "released on %s", s.Name)
	}
	require.NoError(t, c.Servers[0].Client().Set(context.Background(), "floor:k", "other", time.Minute).Err())
	n, err = f.Cycle("floor:k", "v", time.Second)
	require.NoError(t, err)
	assert.Equal(t, 2, n, "a held key is not granted")
	assert.Equal(t, "other", c.Servers[0].Client().Get(context.Background(), "floor:k").Val(), "another owner's key is not released")
}
