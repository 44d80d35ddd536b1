package bench

import (
	"fmt"
	"math"
	"os"
	"runtime/metrics"
	"strings"
	"time"

	"github.com/redlock/redlock/internal/schedstat"
)

// SchedStats is how long a process waited for a processor during a span of its
// run: its goroutines, from runnable to running (the Go runtime's
// /sched/latencies:seconds, in the runtime's buckets: a figure is the upper bound
// of the bucket it fell in), and its threads, on the kernel's run queues
// (/proc/PID/task/*/schedstat: Linux only, zero elsewhere; threads that exited
// during the span are not counted). It tells the machine's share of a wait apart
// from the program's: a goroutine or a thread that waits for a processor is
// ready to run and does not.
type SchedStats struct {
	GoWakeups int64         `json:"go_wakeups,omitempty"`
	GoP99     time.Duration `json:"go_p99_ns,omitempty"`
	GoP999    time.Duration `json:"go_p999_ns,omitempty"`
	GoMax     time.Duration `json:"go_max_ns,omitempty"`
	CPU       time.Duration `json:"cpu_ns,omitempty"`       // the threads' time on a processor
	RunDelay  time.Duration `json:"run_delay_ns,omitempty"` // the threads' time on a run queue, ready
	Slices    int64         `json:"slices,omitempty"`       // the threads' times on a processor
}

// String sums s up for a report.
func (s SchedStats) String() string {
	var parts []string
	if s.GoWakeups > 0 {
		parts = append(parts, fmt.Sprintf("goroutines waited for a processor p99 %v, p99.9 %v, max %v (%d wake-ups)",
			Round(s.GoP99), Round(s.GoP999), Round(s.GoMax), s.GoWakeups))
	}
	if s.Slices > 0 {
		parts = append(parts, s.Threads())
	}
	return strings.Join(parts, "; ")
}

// Threads sums up the threads' waits on the run queue.
func (s SchedStats) Threads() string {
	share := 0.0
	if s.CPU > 0 {
		share = 100 * float64(s.RunDelay) / float64(s.CPU)
	}
	return fmt.Sprintf("threads waited on the run queue %v for %v on a processor (%.0f %%), %v per slice",
		Round(s.RunDelay), Round(s.CPU), share, Round(s.RunDelay/time.Duration(max(s.Slices, 1))))
}

// Sub returns the threads' figures of the span between before and s (both read
// by ThreadSched of one process).
func (s SchedStats) Sub(before SchedStats) SchedStats {
	return SchedStats{CPU: s.CPU - before.CPU, RunDelay: s.RunDelay - before.RunDelay, Slices: s.Slices - before.Slices}
}

// Add returns the figures of s and o together: the wake-ups and the threads'
// times summed, the goroutines' percentiles and maximum the worse of the two.
func (s SchedStats) Add(o SchedStats) SchedStats {
	return SchedStats{
		GoWakeups: s.GoWakeups + o.GoWakeups,
		GoP99:     max(s.GoP99, o.GoP99), GoP999: max(s.GoP999, o.GoP999), GoMax: max(s.GoMax, o.GoMax),
		CPU: s.CPU + o.CPU, RunDelay: s.RunDelay + o.RunDelay, Slices: s.Slices + o.Slices,
	}
}

// SchedProbe measures this process's SchedStats over a span: Start, then Stop.
type SchedProbe struct {
	hist    *metrics.Float64Histogram
	threads SchedStats
}

const schedLatencies = "/sched/latencies:seconds"

// Start reads the counters at the span's start.
func (p *SchedProbe) Start() {
	p.hist = readGoLatencies()
	p.threads, _ = ThreadSched(os.Getpid())
}

// Stop returns the stats of the span since Start.
func (p *SchedProbe) Stop() SchedStats {
	now, _ := ThreadSched(os.Getpid())
	s := now.Sub(p.threads)
	if h := readGoLatencies(); h != nil && p.hist != nil && len(h.Counts) == len(p.hist.Counts) {
		counts := make([]uint64, len(h.Counts))
		for i := range counts {
			counts[i] = h.Counts[i] - p.hist.Counts[i]
		}
		s.GoWakeups, s.GoP99, s.GoP999, s.GoMax = histogramFigures(h.Buckets, counts)
	}
	return s
}

func readGoLatencies() *metrics.Float64Histogram {
	sample := []metrics.Sample{{Name: schedLatencies}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindFloat64Histogram {
		return nil
	}
	return sample[0].Value.Float64Histogram()
}

// histogramFigures returns the count of a histogram (counts[i] in [buckets[i],
// buckets[i+1]) seconds) and the upper bounds of the buckets of its p99, p99.9 and
// last sample.
func histogramFigures(buckets []float64, counts []uint64) (n int64, p99, p999, top time.Duration) {
	var total uint64
	for _, c := range counts {
		total += c
	}
	if total == 0 {
		return 0, 0, 0, 0
	}
	bound := func(i int) time.Duration {
		b := buckets[i+1]
		if math.IsInf(b, 1) {
			b = buckets[i]
		}
		return time.Duration(b * float64(time.Second))
	}
	at := func(q float64) time.Duration {
		want := uint64(math.Ceil(q * float64(total)))
		var seen uint64
		for i, c := range counts {
			if seen += c; seen >= want {
				return bound(i)
			}
		}
		return 0
	}
	for i := len(counts) - 1; i >= 0; i-- {
		if counts[i] > 0 {
			top = bound(i)
			break
		}
	}
	return int64(total), at(0.99), at(0.999), top
}

// ThreadSched sums the run-queue figures of every thread of process pid
// (schedstat.Threads). An error off Linux, or when the process is gone.
func ThreadSched(pid int) (SchedStats, error) {
	threads, err := schedstat.Threads(pid)
	if err != nil {
		return SchedStats{}, err
	}
	var s SchedStats
	for _, th := range threads {
		s.CPU += th.CPU
		s.RunDelay += th.RunDelay
		s.Slices += th.Slices
	}
	return s, nil
}
