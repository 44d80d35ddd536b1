package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	experiment "github.com/redlock/redlock/internal/bench"
	"github.com/redlock/redlock/quorum"
)

// What sets the maximum wait. Each worker records, per call of its Acquirer, which
// path the call took (rounds, masters that failed in them, garbage collections of
// the worker that ended meanwhile), and the benchmark's own process, idle while the
// workers run, measures how late its own 1 ms sleeps wake up (the machine's
// scheduling stalls). The longest waits are then set beside what happened during
// them, so that a stall of the machine is told apart from a lost wake-up (a retry
// delay: 50-250 ms, several rounds), a master timing out, or a garbage collection.

// envPaths names the directory where each worker writes the paths of its calls.
const envPaths = "REDLOCK_BENCH_PATHS"

// acqPath is one call of a worker's Acquirer.
type acqPath struct {
	Start  int64 `json:"s"` // Unix ns
	End    int64 `json:"e"`
	Rounds int   `json:"r,omitempty"` // rounds made (quorum only)
	Errors int   `json:"x,omitempty"` // master answers that were failures (quorum only)
	GCs    int   `json:"g,omitempty"` // garbage collections of the worker that ended during it
	// Last holds the masters' latencies in µs of the call's last acquisition
	// round, in the order the round reported them (quorum only): a long gap's
	// winning round, taken apart.
	Last []int32 `json:"l,omitempty"`
	// Released is when the release of the lock the call took returned (Unix ns):
	// the first part of the gap to the next acquisition.
	Released int64 `json:"d,omitempty"`
}

// pathRecorder counts the rounds and master failures of the call in progress; it
// is the worker Manager's Observer.
type pathRecorder struct {
	rounds, errors atomic.Int64
	masters        int // masters per round
	mu             sync.Mutex
	last           []int32   // the latest acquisition round's latencies so far, µs
	paths          []acqPath // appended by the worker's one goroutine
}

// Observe implements quorum.Observer.
func (p *pathRecorder) Observe(e quorum.Event) {
	switch {
	case e.Kind == quorum.EventAcquire:
		p.rounds.Add(int64(e.Rounds))
	case e.Kind == quorum.EventMasterRound:
		if e.Outcome == quorum.OutcomeError {
			p.errors.Add(1)
		}
		if e.Op == "acquire" && p.masters > 0 {
			p.mu.Lock()
			if len(p.last) == p.masters {
				p.last = p.last[:0]
			}
			p.last = append(p.last, int32(e.Latency/time.Microsecond))
			p.mu.Unlock()
		}
	}
}

// gcCycles reads the number of completed garbage collections of this process.
func gcCycles() int {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int(s[0].Value.Uint64())
}

// wrap returns acquire recording the path of each call.
func (p *pathRecorder) wrap(acquire experiment.Acquirer) experiment.Acquirer {
	return func(ctx context.Context) (func(), error) {
		p.rounds.Store(0)
		p.errors.Store(0)
		gc := gcCycles()
		r := acqPath{Start: time.Now().UnixNano()}
		rel, err := acquire(ctx)
		r.End = time.Now().UnixNano()
		r.Rounds, r.Errors, r.GCs = int(p.rounds.Load()), int(p.errors.Load()), gcCycles()-gc
		p.mu.Lock()
		if len(p.last) == p.masters {
			r.Last = slices.Clone(p.last)
		}
		p.last = p.last[:0]
		p.mu.Unlock()
		p.paths = append(p.paths, r)
		if err != nil {
			return rel, err
		}
		i := len(p.paths) - 1
		return func() {
			rel()
			p.paths[i].Released = time.Now().UnixNano()
		}, nil
	}
}

// save writes the recorded paths of worker id where envPaths says, if it does.
func (p *pathRecorder) save(id string) error {
	dir := os.Getenv(envPaths)
	if dir == "" {
		return nil
	}
	data, err := json.Marshal(p.paths)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, id+".json"), data, 0o600)
}

// stall is a moment when the benchmark's idle process woke up late.
type stall struct {
	end  int64 // Unix ns
	late time.Duration
}

// runnable is the machine's count of runnable tasks at a moment (/proc/loadavg).
type runnable struct {
	at int64 // Unix ns
	n  int
}

// stallProbe sleeps 1 ms again and again and records the wake-ups later than 2 ms,
// and, every 10 ms, the machine's count of runnable tasks (Linux only).
type stallProbe struct {
	stop     chan struct{}
	done     chan struct{}
	stalls   []stall
	runnable []runnable
	sleeps   int // read after finish
}

func startProbe() *stallProbe {
	p := &stallProbe{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		var read int64
		for {
			select {
			case <-p.stop:
				return
			default:
			}
			t0 := time.Now()
			time.Sleep(time.Millisecond)
			now := time.Now()
			p.sleeps++
			if late := now.Sub(t0) - time.Millisecond; late > 2*time.Millisecond {
				p.stalls = append(p.stalls, stall{end: now.UnixNano(), late: late})
			}
			if now.UnixNano()-read >= int64(10*time.Millisecond) {
				read = now.UnixNano()
				if n, ok := runnableTasks(); ok {
					p.runnable = append(p.runnable, runnable{at: read, n: n})
				}
			}
		}
	}()
	return p
}

// runnableTasks reads the count of runnable tasks: the fourth field of
// /proc/loadavg is "runnable/total".
func runnableTasks() (int, bool) {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(data))
	if len(f) < 4 {
		return 0, false
	}
	r, _, _ := strings.Cut(f[3], "/")
	n, err := strconv.Atoi(r)
	return n, err == nil
}

func (p *stallProbe) finish() *stallProbe {
	close(p.stop)
	<-p.done
	return p
}

// pathsRun is what a run recorded besides the workers' results.
type pathsRun struct {
	paths    map[string][]acqPath // by worker id
	stalls   []stall
	runnable []runnable
}

// runnableDuring is the mean count of runnable tasks sampled in [from, to] (all
// samples when from is 0), and whether there was any.
func (run pathsRun) runnableDuring(from, to int64) (float64, bool) {
	sum, n := 0, 0
	for _, r := range run.runnable {
		if from == 0 || r.at >= from && r.at <= to {
			sum += r.n
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return float64(sum) / float64(n), true
}

// withPaths runs fn (which starts the workers, with cmds' environment extended by
// the returned env) under a stall probe and reads the paths the workers saved.
func withPaths(dir string, fn func(env string)) (pathsRun, error) {
	probe := startProbe()
	fn(envPaths + "=" + dir)
	probe.finish()
	run := pathsRun{stalls: probe.stalls, runnable: probe.runnable, paths: map[string][]acqPath{}}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return run, err
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return run, err
		}
		var ps []acqPath
		if err := json.Unmarshal(data, &ps); err != nil {
			return run, fmt.Errorf("%s: %w", f, err)
		}
		run.paths[strings.TrimSuffix(filepath.Base(f), ".json")] = ps
	}
	return run, nil
}

// explain describes the top longest calls of a run: their path, and what else
// happened meanwhile (the longest gap between two acquisitions by anyone, the
// benchmark process's longest late wake-up, garbage collections), with a verdict.
func (run pathsRun) explain(top int) string {
	type call struct {
		id string
		acqPath
	}
	var calls []call
	var starts []int64 // every acquisition's end, to find the gaps
	byRounds := map[string][]time.Duration{}
	for id, ps := range run.paths {
		for _, p := range ps {
			calls = append(calls, call{id, p})
			starts = append(starts, p.End)
			k := "1"
			switch {
			case p.Rounds == 0:
				k = "-"
			case p.Rounds == 2:
				k = "2"
			case p.Rounds > 2:
				k = "3+"
			}
			byRounds[k] = append(byRounds[k], time.Duration(p.End-p.Start))
		}
	}
	if len(calls) == 0 {
		return ""
	}
	slices.Sort(starts)
	slices.SortFunc(calls, func(a, b call) int { return int((b.End - b.Start) - (a.End - a.Start)) })
	var mean time.Duration
	for _, c := range calls {
		mean += time.Duration(c.End - c.Start)
	}
	mean /= time.Duration(len(calls))
	var sb strings.Builder
	fmt.Fprintf(&sb, "calls by rounds:")
	for _, k := range []string{"1", "2", "3+"} {
		if ws := byRounds[k]; len(ws) > 0 {
			fmt.Fprintf(&sb, "  %s round(s): %d (max %v)", k, len(ws), experiment.Round(slices.Max(ws)))
		}
	}
	late := time.Duration(0)
	for _, s := range run.stalls {
		late = max(late, s.late)
	}
	fmt.Fprintf(&sb, "\nidle probe: %d late wake-ups over 2 ms, the longest %v", len(run.stalls), experiment.Round(late))
	runAll, _ := run.runnableDuring(0, 0)
	fmt.Fprintf(&sb, "; runnable tasks on the machine: %.1f on average\n", runAll)
	sb.WriteString(run.gaps(top))
	if q, ok := run.atQuorum(); ok {
		sb.WriteString(q)
	}
	for _, c := range calls[:min(top, len(calls))] {
		wait := time.Duration(c.End - c.Start)
		gap := time.Duration(0) // the longest time without any acquisition, within the call
		others := -1            // acquisitions by the others meanwhile (the call's own is counted in the loop)
		i, _ := slices.BinarySearch(starts, c.Start)
		prev := c.Start
		for ; i < len(starts) && starts[i] <= c.End; i++ {
			gap = max(gap, time.Duration(starts[i]-prev))
			prev = starts[i]
			others++
		}
		stalled := time.Duration(0) // the idle probe's lateness in all, during the call
		for _, s := range run.stalls {
			if s.end >= c.Start && s.end-int64(s.late) <= c.End {
				stalled += s.late
			}
		}
		busy, _ := run.runnableDuring(c.Start, c.End)
		var verdict string
		switch excess := wait - 2*mean; {
		case c.Errors > 0:
			verdict = "a master failed or timed out in a round"
		case stalled >= excess/2:
			verdict = "the machine: the idle probe stalled for most of the excess"
		case gap >= excess/2 && busy >= 1.5*runAll && busy >= 4:
			verdict = "the machine: nobody acquired while the runnable tasks were well above the run's mean"
		case gap >= excess/2 && c.GCs > 0:
			verdict = "nobody acquired; garbage collection in this process meanwhile"
		case gap >= excess/2:
			verdict = "nobody acquired, though the idle probe ran"
		case others <= len(run.paths)-1:
			verdict = "queue: behind the others, their handoffs slow"
		case c.Rounds == 0:
			verdict = "others went on: its retries lost every race"
		case wait < quorum.DefaultRetryDelay-quorum.DefaultRetryJitter:
			// Shorter than any retry delay: it slept none.
			verdict = "others went on: this waiter's rounds came late (its process, or its first round before it was queued)"
		case c.Rounds > 2:
			verdict = "others went on: this waiter's rounds failed or it missed wake-ups (retry delay)"
		default:
			verdict = "others went on: this waiter was not woken (retry delay)"
		}
		fmt.Fprintf(&sb, "%v %s: rounds %d, failed masters %d, GCs %d; meanwhile others acquired %d times, the longest gap %v, the idle probe was late by %v in all, %.1f runnable tasks: %s\n",
			experiment.Round(wait), c.id, c.Rounds, c.Errors, c.GCs, others, experiment.Round(gap), experiment.Round(stalled), busy, verdict)
	}
	return sb.String()
}

// gaps describes the gaps between one acquisition and the next by anyone (with
// the lock held for no time, a release follows each acquisition at once: the
// gaps are the handoffs): how many fall in each half millisecond, and the top
// longest with the rounds of the acquisition that ended each (2: the waiter's
// first round after its wake-up won) and how late the idle probe was meanwhile.
func (run pathsRun) gaps(top int) string {
	type end struct {
		at       int64
		id       string
		rounds   int
		last     []int32
		released int64
	}
	var ends []end
	for id, ps := range run.paths {
		for _, p := range ps {
			ends = append(ends, end{p.End, id, p.Rounds, p.Last, p.Released})
		}
	}
	if len(ends) < 2 {
		return ""
	}
	slices.SortFunc(ends, func(a, b end) int { return int(a.at - b.at) })
	type gap struct {
		d    time.Duration
		prev end
		next end
	}
	var gs []gap
	const bucket, buckets = 500 * time.Microsecond, 6
	var hist [buckets + 1]int
	for i := 1; i < len(ends); i++ {
		g := gap{time.Duration(ends[i].at - ends[i-1].at), ends[i-1], ends[i]}
		gs = append(gs, g)
		hist[min(int(g.d/bucket), buckets)]++
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "gaps between acquisitions:")
	for i, n := range hist[:buckets] {
		fmt.Fprintf(&sb, " %v-%v: %d,", time.Duration(i)*bucket, time.Duration(i+1)*bucket, n)
	}
	fmt.Fprintf(&sb, " over %v: %d\n", buckets*bucket, hist[buckets])
	slices.SortFunc(gs, func(a, b gap) int { return int(b.d - a.d) })
	for _, g := range gs[:min(top, len(gs))] {
		stalled := time.Duration(0)
		for _, s := range run.stalls {
			if s.end >= g.prev.at && s.end-int64(s.late) <= g.next.at {
				stalled += s.late
			}
		}
		rel := ""
		if g.prev.released > 0 {
			rel = fmt.Sprintf("; %s's release returned %v after its acquisition", g.prev.id, experiment.Round(time.Duration(g.prev.released-g.prev.at)))
		}
		fmt.Fprintf(&sb, "  a gap of %v, ended by %s's acquisition in %d round(s); the idle probe late by %v meanwhile%s%s\n",
			experiment.Round(g.d), g.next.id, g.next.rounds, experiment.Round(stalled), rel, lastRound(g.d, g.next.last))
	}
	return sb.String()
}

// TestExplainTellsTheCauses: the verdicts of the wait report on made-up runs of
// two processes, each wait 1 ms but one.
func TestExplainTellsTheCauses(t *testing.T) {
	const ms = int64(time.Millisecond)
	// steady returns n calls of 1 ms, one after the other from at.
	steady := func(at int64, n int) []acqPath {
		var ps []acqPath
		for i := range n {
			ps = append(ps, acqPath{Start: at + int64(i)*ms, End: at + int64(i+1)*ms, Rounds: 2})
		}
		return ps
	}
	tests := []struct {
		name   string
		long   acqPath
		others []acqPath
		stalls []stall
		want   string
		gap    string // in the line of the longest gap
	}{
		{"a master timed out", acqPath{Start: 0, End: 300 * ms, Rounds: 2, Errors: 1}, steady(0, 300), nil,
			"a master failed or timed out", "a gap of 1ms, ended by p2's acquisition in 2 round(s)"},
		{"everyone stopped and the idle probe too", acqPath{Start: 0, End: 300 * ms, Rounds: 2}, append(steady(0, 1), steady(290*ms, 10)...),
			[]stall{{end: 280 * ms, late: 270 * time.Millisecond}}, "the machine", "a gap of 290ms, ended by p2's acquisition in 2 round(s); the idle probe late by 270ms"},
		{"others went on, this one lost its wake-ups", acqPath{Start: 0, End: 300 * ms, Rounds: 5}, steady(0, 300), nil,
			"this waiter's rounds failed or it missed wake-ups", "a gap of 1ms"},
		{"overtaken in less than a retry delay", acqPath{Start: 0, End: 30 * ms, Rounds: 2}, steady(0, 30), nil,
			"this waiter's rounds came late", "a gap of 1ms"},
		{"everyone stopped, the probe ran", acqPath{Start: 0, End: 300 * ms, Rounds: 2}, append(steady(0, 1), steady(290*ms, 10)...), nil,
			"nobody acquired, though the idle probe ran", "a gap of 290ms, ended by p2's acquisition in 2 round(s); the idle probe late by 0s"},
		{"a release that took long", acqPath{Start: 0, End: 300 * ms, Rounds: 2}, append(releasedAfter(steady(0, 1), 280*time.Millisecond), steady(290*ms, 10)...), nil,
			"nobody acquired, though the idle probe ran", "the idle probe late by 0s meanwhile; p2's release returned 280ms after its acquisition"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := pathsRun{paths: map[string][]acqPath{"p1": {tt.long}, "p2": tt.others}, stalls: tt.stalls}
			out := run.explain(1)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			require.Len(t, lines, 5, out)
			assert.True(t, strings.HasPrefix(lines[2], "gaps between acquisitions:"), out)
			assert.Contains(t, lines[3], tt.gap, "the longest gap between acquisitions")
			assert.True(t, strings.HasPrefix(lines[4], time.Duration(tt.long.End-tt.long.Start).String()+" p1:"), out)
			assert.Contains(t, lines[4], tt.want)
		})
	}
}

// atQuorum estimates the run's waits had every winning round returned once a
// quorum of its masters had answered rather than all of them: each wait loses,
// for every acquisition that ended within it (its own included), the time between
// that acquisition's round's quorum-th reply and its last. An estimate: the
// replies are read in the masters' order, so one read late may have come early.
func (run pathsRun) atQuorum() (string, bool) {
	type acq struct{ end, cut int64 }
	var acqs []acq
	var calls []acqPath
	rounds := false
	for _, ps := range run.paths {
		for _, p := range ps {
			calls = append(calls, p)
			var cut int64
			if n := len(p.Last); n > 0 {
				rounds = true
				l := slices.Sorted(slices.Values(p.Last))
				cut = int64(l[n-1]-l[n/2]) * int64(time.Microsecond)
			}
			acqs = append(acqs, acq{p.End, cut})
		}
	}
	if !rounds {
		return "", false
	}
	slices.SortFunc(acqs, func(a, b acq) int { return int(a.end - b.end) })
	sum := make([]int64, len(acqs)+1) // sum[i]: the cuts of acqs[:i]
	for i, a := range acqs {
		sum[i+1] = sum[i] + a.cut
	}
	var total, worst, now, nowWorst int64
	for _, c := range calls {
		i, _ := slices.BinarySearchFunc(acqs, c.Start, func(a acq, t int64) int { return int(a.end - t) })
		j, _ := slices.BinarySearchFunc(acqs, c.End+1, func(a acq, t int64) int { return int(a.end - t) })
		w := c.End - c.Start - (sum[j] - sum[i])
		total += w
		worst = max(worst, w)
		now += c.End - c.Start
		nowWorst = max(nowWorst, c.End-c.Start)
	}
	mean, nowMean := total/int64(len(calls)), now/int64(len(calls))
	return fmt.Sprintf("rounds returning at their quorum, estimated: max / mean wait %v / %v (%.2f) against %v / %v (%.2f)\n",
		experiment.Round(time.Duration(worst)), experiment.Round(time.Duration(mean)), float64(worst)/float64(mean),
		experiment.Round(time.Duration(nowWorst)), experiment.Round(time.Duration(nowMean)), float64(nowWorst)/float64(nowMean)), true
}

// TestAtQuorumCutsTheSlowMinority: two processes, one wait of 10 ms that holds
// the other's acquisition whose round read three masters at 100 µs and two at
// 5.1 ms: returned at its quorum, both calls lose 5 ms.
func TestAtQuorumCutsTheSlowMinority(t *testing.T) {
	const ms = int64(time.Millisecond)
	run := pathsRun{paths: map[string][]acqPath{
		"p1": {{Start: 0, End: 10 * ms, Last: []int32{100, 100, 100, 100, 100}}},
		"p2": {{Start: 0, End: 6 * ms, Last: []int32{5100, 100, 100, 5100, 100}}},
	}}
	out, ok := run.atQuorum()
	require.True(t, ok)
	assert.Equal(t, "rounds returning at their quorum, estimated: max / mean wait 5ms / 3ms (1.67) against 10ms / 8ms (1.25)\n", out)
	_, ok = pathsRun{paths: map[string][]acqPath{"p1": {{Start: 0, End: ms}}}}.atQuorum()
	assert.False(t, ok, "no round recorded: no estimate")
}

// releasedAfter returns ps with each call's release returning d after its acquisition.
func releasedAfter(ps []acqPath, d time.Duration) []acqPath {
	for i := range ps {
		ps[i].Released = ps[i].End + int64(d)
	}
	return ps
}

// lastRound describes the winning round of a gap of d: its masters' latencies,
// and what of the gap came before the round began (the release, the wake-up's
// delivery, the waiter's scheduling) when the round's slowest master is taken as
// its length.
func lastRound(d time.Duration, lat []int32) string {
	if len(lat) == 0 {
		return ""
	}
	sorted := slices.Sorted(slices.Values(lat))
	slowest := time.Duration(sorted[len(sorted)-1]) * time.Microsecond
	return fmt.Sprintf("; its round's masters answered in %v µs (in order), so %v of the gap came before the round",
		sorted, experiment.Round(max(d-slowest, 0)))
}
