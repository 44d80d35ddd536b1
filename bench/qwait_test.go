package bench

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	experiment "github.com/redlock/redlock/internal/bench"
)

// Who waited for a processor during a long gap. With REDLOCK_BENCH_QWAIT=1 the
// benchmark samples, every qwaitEvery, the run-queue wait of every master and
// worker (/proc/PID/schedstat: the time the process's threads were runnable but
// not running, summed over its threads); the report of a gap then names the
// processes that waited longest within it. One goroutine of the benchmark's
// process does the sampling (each worker leaves its pid in the paths directory).
// Off by default: it costs the machine thousands of reads of /proc a second,
// which a saturated 2-core machine feels in the very waits it measures.

// envQWait turns the sampling on.
const envQWait = "REDLOCK_BENCH_QWAIT"

// qwaitEvery is the sampling interval.
const qwaitEvery = 2 * time.Millisecond

// qsample is a process's cumulative run-queue wait (ns) at a moment (Unix ns).
type qsample struct {
	at, wait int64
}

// procWait reads the run-queue wait of process pid so far.
func procWait(pid int) (int64, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/schedstat")
	if err != nil {
		return 0, false
	}
	return parseProcWait(string(data))
}

// parseProcWait parses a schedstat line: "runtime_ns wait_ns timeslices".
func parseProcWait(line string) (int64, bool) {
	f := strings.Fields(line)
	if len(f) < 2 {
		return 0, false
	}
	n, err := strconv.ParseInt(f[1], 10, 64)
	return n, err == nil
}

// qsampler samples the run-queue waits of the masters and the workers.
type qsampler struct {
	stop    chan struct{}
	done    chan struct{}
	mu      sync.Mutex
	dir     string // where the workers leave their pids (watch)
	samples map[string][]qsample
}

// sampleQueues starts sampling the masters' run-queue waits, named "master 1"
// and so on, or returns nil when envQWait is not set.
func (mt *masterTime) sampleQueues() *qsampler {
	if os.Getenv(envQWait) == "" || len(mt.pids) == 0 {
		return nil
	}
	q := &qsampler{stop: make(chan struct{}), done: make(chan struct{}), samples: map[string][]qsample{}}
	procs := map[string]int{}
	for i, pid := range mt.pids {
		procs["master "+strconv.Itoa(i+1)] = pid
	}
	go func() {
		defer close(q.done)
		t := time.NewTicker(qwaitEvery)
		defer t.Stop()
		for {
			q.mu.Lock()
			dir := q.dir
			q.mu.Unlock()
			if dir != "" {
				q.findWorkers(dir, procs)
			}
			for name, pid := range procs {
				if w, ok := procWait(pid); ok {
					q.samples[name] = append(q.samples[name], qsample{time.Now().UnixNano(), w})
				}
			}
			select {
			case <-q.stop:
				return
			case <-t.C:
			}
		}
	}()
	return q
}

// watch tells the sampler where the workers leave their pids (nil q: not sampling).
func (q *qsampler) watch(dir string) {
	if q == nil {
		return
	}
	q.mu.Lock()
	q.dir = dir
	q.mu.Unlock()
}

// findWorkers adds the workers whose pid files appeared in dir to procs.
func (q *qsampler) findWorkers(dir string, procs map[string]int) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.pid"))
	for _, f := range files {
		id := strings.TrimSuffix(filepath.Base(f), ".pid")
		if _, ok := procs[id]; ok {
			continue
		}
		data, err := os.ReadFile(f)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && perr == nil {
			procs[id] = pid
		}
	}
}

// finish stops the sampling and returns the samples by process (nil q: none).
func (q *qsampler) finish() map[string][]qsample {
	if q == nil {
		return nil
	}
	close(q.stop)
	<-q.done
	return q.samples
}

// leavePid writes this worker's pid where the sampler looks for it (envPaths), when
// envQWait is set.
func leavePid(id string) error {
	dir := os.Getenv(envPaths)
	if dir == "" || os.Getenv(envQWait) == "" {
		return nil
	}
	return os.WriteFile(filepath.Join(dir, id+".pid"), []byte(strconv.Itoa(os.Getpid())), 0o600)
}

// waitedIn estimates how long the process of samples s waited on a run queue
// between from and to: its cumulative wait at each end, interpolated between the
// samples around it (a wait is spread evenly over its sampling interval), and
// whether samples exist on both sides.
func waitedIn(s []qsample, from, to int64) (time.Duration, bool) {
	a, okA := waitAt(s, from)
	b, okB := waitAt(s, to)
	if !okA || !okB {
		return 0, false
	}
	return time.Duration(b - a), true
}

// waitAt interpolates the cumulative wait of samples s at t.
func waitAt(s []qsample, t int64) (float64, bool) {
	j, _ := slices.BinarySearchFunc(s, t, func(q qsample, t int64) int { return cmp.Compare(q.at, t) })
	switch {
	case j >= len(s):
		return 0, false
	case s[j].at == t:
		return float64(s[j].wait), true
	case j == 0:
		return 0, false
	}
	a, b := s[j-1], s[j]
	return float64(a.wait) + float64(b.wait-a.wait)*float64(t-a.at)/float64(b.at-a.at), true
}

// queuedDuring names the processes that waited on a run queue during [from, to],
// the longest first, at most three, with their waits: "p3 4.1ms, master 2
// 1.2ms"; and the longest wait.
func queuedDuring(samples map[string][]qsample, from, to int64) (string, time.Duration) {
	type w struct {
		name string
		d    time.Duration
	}
	var ws []w
	for name, s := range samples {
		if d, ok := waitedIn(s, from, to); ok && d > 0 {
			ws = append(ws, w{name, d})
		}
	}
	if len(ws) == 0 {
		return "", 0
	}
	slices.SortFunc(ws, func(a, b w) int { return cmp.Compare(int64(b.d), int64(a.d)) })
	parts := make([]string, 0, 3)
	for _, x := range ws[:min(3, len(ws))] {
		parts = append(parts, x.name+" "+experiment.Round(x.d).String())
	}
	return strings.Join(parts, ", "), ws[0].d
}

func TestQueuedDuringNamesTheLongestWaits(t *testing.T) {
	const ms = int64(time.Millisecond)
	samples := map[string][]qsample{
		"p1":       {{0, 0}, {2 * ms, 0}, {4 * ms, 3 * ms}, {6 * ms, 3 * ms}},
		"master 1": {{0, 0}, {2 * ms, ms}, {4 * ms, ms}, {6 * ms, 2 * ms}},
		"p2":       {{0, 0}, {6 * ms, 0}},
		"p3":       {{3 * ms, 0}, {6 * ms, 5 * ms}},
	}
	names, longest := queuedDuring(samples, 2*ms, 4*ms)
	assert.Equal(t, "p1 3ms", names)
	assert.Equal(t, 3*time.Millisecond, longest)
	names, _ = queuedDuring(samples, 1*ms, 5*ms)       // half of each end's interval
	assert.Equal(t, "p1 3ms, master 1 1ms", names)     // p3 has no sample before 1 ms
	names, longest = queuedDuring(samples, 7*ms, 8*ms) // after the last samples
	assert.Equal(t, "", names)
	assert.Zero(t, longest)
	w, ok := parseProcWait("123 456 7\n")
	assert.True(t, ok)
	assert.Equal(t, int64(456), w)
	_, ok = parseProcWait("garbage")
	assert.False(t, ok)
}

// span is a gap between two acquisitions: from, to (Unix ns).
type span struct{ from, to int64 }

// queuedInGaps sums up the long gaps against the run-queue
// waits within them: how many had one process wait at least half the gap's
// excess over the median gap, median, and the gaps' excess against the longest
// such wait, in all. Empty without samples.
func (run pathsRun) queuedInGaps(median time.Duration, gaps []span) string {
	if len(run.qwait) == 0 {
		return ""
	}
	n, half := 0, 0
	var excess, waited time.Duration
	for _, g := range gaps {
		d := time.Duration(g.to - g.from)
		_, longest := queuedDuring(run.qwait, g.from, g.to)
		n++
		excess += d - median
		waited += longest
		if 2*longest >= d-median {
			half++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("  gaps over 3ms: %d; in %d of them one process waited on a run queue at least half the gap's excess over the median gap (%v); their excess %v in all, the longest wait of one process in each %v in all\n",
		n, half, experiment.Round(median), experiment.Round(excess), experiment.Round(waited))
}
