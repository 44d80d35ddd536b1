package bench

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	experiment "github.com/redlock/redlock/internal/bench"
	"github.com/redlock/redlock/internal/redistest"
)

// envHandoffWorker starts a worker process of BenchmarkHandoff ("quorum-plain" or
// "quorum-fair"); the other settings are BenchmarkContention's.
const envHandoffWorker = "REDLOCK_HANDOFF_WORKER"

// handoffOps is the number of acquisitions per process of BenchmarkHandoff, unless
// REDLOCK_BENCH_OPS says otherwise: 5 x 100 gives about 500 handoffs per mode.
const handoffOps = 100

// BenchmarkHandoff measures the handoff (the time from a release to the next
// acquisition by anyone) with 5 processes taking one name, in plain and in fair
// mode, side by side on the same five masters, with the wait (its mean, its maximum
// and their ratio) to show that fair mode stays fair, and beside them the same
// handoff's floor on this machine (floorRing: the same steps on raw connections,
// without the protocol). Run it once per measurement:
//
//	go -C bench test . -run '^$' -bench Handoff -benchtime 1x
//
// Unlike BenchmarkContention's, the workers also warm their wake-up subscriptions
// before the common start, so that the first acquisitions measure the steady state
// rather than the start of a Manager's pub/sub connections.
func BenchmarkHandoff(b *testing.B) {
	ops := handoffOps
	if n, err := strconv.Atoi(os.Getenv(envOps)); err == nil && n > 0 {
		ops = n
	}
	c := redistest.Start(b, 5, redistest.Options{})
	for _, kind := range []string{"quorum-plain", "quorum-fair", "floor-ring"} {
		b.Run(strings.TrimPrefix(kind, "quorum-"), func(b *testing.B) {
			var s experiment.Summary
			var run pathsRun
			for i := 0; i < b.N; i++ {
				s, run = runHandoff(b, kind, c.Addrs(), 5, ops)
			}
			if testing.Verbose() {
				b.Log("the longest waits:\n" + run.explain(3))
			}
			b.ReportMetric(ms(s.HandoffP50), "handoff-p50-ms")
			b.ReportMetric(ms(s.HandoffMean), "handoff-mean-ms")
			b.ReportMetric(ms(s.HandoffP99), "handoff-p99-ms")
			b.ReportMetric(ms(s.MeanWait), "wait-mean-ms")
			b.ReportMetric(ms(s.MaxWait), "wait-max-ms")
			if s.MeanWait > 0 {
				b.ReportMetric(float64(s.MaxWait)/float64(s.MeanWait), "max/mean")
			}
			b.ReportMetric(s.PerSecond, "acq/s")
		})
	}
}

// runHandoff runs the contention experiment with clients worker processes of kind,
// each taking the lock ops times.
func runHandoff(tb testing.TB, kind string, addrs []string, clients, ops int) (experiment.Summary, pathsRun) {
	tb.Helper()
	masters := watchMasters(tb, addrs)
	mq := masters.sampleQueues()
	results, run := runWorkers(tb, mq, "TestHandoffWorker", clients, envHandoffWorker+"="+kind,
		envAddrs+"="+strings.Join(addrs, ","), envOps+"="+strconv.Itoa(ops), envClients+"="+strconv.Itoa(clients))
	run.qwait = mq.finish()
	run.waited = masters.finish(clients*ops) + "\n" + workersSched(results)
	return experiment.Summarize(kind, ops, results), run
}

// TestHandoffWorker is one process of BenchmarkHandoff; it does nothing unless
// started by it. Like TestContentionWorker, it prints an experiment.WorkerResult and exits.
func TestHandoffWorker(t *testing.T) {
	kind := os.Getenv(envHandoffWorker)
	if kind == "" {
		return
	}
	addrs := strings.Split(os.Getenv(envAddrs), ",")
	rec := &pathRecorder{masters: len(addrs)}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var acquire experiment.Acquirer
	var closeFn func()
	var err error
	if kind == "floor-ring" {
		clients, _ := strconv.Atoi(os.Getenv(envClients))
		acquire, closeFn, err = floorRingAcquirer(addrs, os.Getenv(envID), clients, rec)
		require.NoError(t, err)
	} else {
		acquire, closeFn, err = acquirerFor(kind, addrs, rec)
		require.NoError(t, err)
		warmWake(ctx, acquire)
	}
	startNS, err := strconv.ParseInt(os.Getenv(envStart), 10, 64)
	require.NoError(t, err)
	ops, err := strconv.Atoi(os.Getenv(envOps))
	require.NoError(t, err)
	rec.paths = nil
	require.NoError(t, experiment.SleepUntil(ctx, time.Unix(0, startNS)))
	require.NoError(t, leavePid(os.Getenv(envID)))
	res := experiment.Work(ctx, os.Getenv(envID), acquire, ops, 0)
	closeFn()
	require.NoError(t, rec.save(os.Getenv(envID)))
	require.NoError(t, json.NewEncoder(os.Stdout).Encode(res))
	os.Exit(0)
}

// warmWake takes the lock once and, while holding it, makes a second acquisition
// wait for it, which starts the Manager's wake-up subscriptions of the name (they
// linger for half a minute after the last waiter).
func warmWake(ctx context.Context, acquire experiment.Acquirer) {
	rel, err := acquire(ctx)
	if err != nil {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if rel2, err := acquire(ctx); err == nil {
			rel2()
		}
	}()
	time.Sleep(20 * time.Millisecond)
	rel()
	<-done
}
