// Package bench is the driver of the contention experiment of the fair-lock thesis
// (N processes each take one shared lock K times). It is shared by `redlock bench`
// and the Go benchmarks (the module in bench/); the lock client is a plain
// function, so the benchmarks can run the same experiment with other libraries.
package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Acquirer takes the shared lock once, blocking until it holds it or giving up with
// an error (the worker then tries again, counting a failure). release gives it back.
type Acquirer func(ctx context.Context) (release func(), err error)

// WorkerResult is what one process of the experiment reports. Times are wall-clock
// Unix nanoseconds, comparable across processes on one machine.
type WorkerResult struct {
	ID string `json:"id"`
	// Waits are the time from asking for the lock to holding it, per acquisition, in ns.
	Waits []int64 `json:"waits_ns"`
	// Acquired and Released are the moments each acquisition started and ended.
	Acquired []int64 `json:"acquired_unix_ns"`
	Released []int64 `json:"released_unix_ns"`
	// Failures counts calls of the Acquirer that gave up (retry budget exhausted).
	Failures int    `json:"failures"`
	Started  int64  `json:"started_unix_ns"`
	Finished int64  `json:"finished_unix_ns"`
	Error    string `json:"error,omitempty"`
	// Sched is how long the process waited for a processor while it worked.
	Sched SchedStats `json:"sched"`
}

// Work takes the lock ops times with acquire, holding it hold each time, and
// records every wait. It stops early, with Error set, when ctx ends.
func Work(ctx context.Context, id string, acquire Acquirer, ops int, hold time.Duration) (r WorkerResult) {
	r = WorkerResult{ID: id, Started: time.Now().UnixNano()}
	var probe SchedProbe
	probe.Start()
	defer func() { r.Sched = probe.Stop() }()
	for len(r.Waits) < ops {
		t0 := time.Now()
		var release func()
		for {
			rel, err := acquire(ctx)
			if err == nil {
				release = rel
				break
			}
			if ctx.Err() != nil {
				r.Error = fmt.Sprintf("after %d acquisitions: %v", len(r.Waits), err)
				r.Finished = time.Now().UnixNano()
				return r
			}
			r.Failures++
		}
		got := time.Now()
		r.Waits = append(r.Waits, got.Sub(t0).Nanoseconds())
		r.Acquired = append(r.Acquired, got.UnixNano())
		if hold > 0 {
			time.Sleep(hold)
		}
		r.Released = append(r.Released, time.Now().UnixNano())
		release()
	}
	r.Finished = time.Now().UnixNano()
	return r
}

// RunProcesses starts one process per command, each expected to print one
// WorkerResult as JSON on stdout, and collects the results in order. Each
// process's stderr goes to stderr. It fails when a process fails or prints no
// result; the other processes are still waited for.
func RunProcesses(ctx context.Context, cmds []*exec.Cmd, stderr io.Writer) ([]WorkerResult, error) {
	out := make([]WorkerResult, len(cmds))
	errs := make([]error, len(cmds))
	var mu sync.Mutex // serialises writes to stderr
	var wg sync.WaitGroup
	for i, c := range cmds {
		stdout, err := c.StdoutPipe()
		if err != nil {
			return nil, err
		}
		ep, err := c.StderrPipe()
		if err != nil {
			return nil, err
		}
		if err := c.Start(); err != nil {
			return nil, fmt.Errorf("start worker %d: %w", i+1, err)
		}
		wg.Add(2)
		go func() {
			defer wg.Done()
			sc := bufio.NewScanner(ep)
			for sc.Scan() {
				mu.Lock()
				fmt.Fprintf(stderr, "worker %d: %s\n", i+1, sc.Text())
				mu.Unlock()
			}
		}()
		go func() {
			defer wg.Done()
			data, rerr := io.ReadAll(stdout)
			werr := c.Wait()
			switch {
			case rerr != nil:
				errs[i] = fmt.Errorf("worker %d: read result: %w", i+1, rerr)
			case json.Unmarshal(data, &out[i]) != nil:
				errs[i] = fmt.Errorf("worker %d printed no result (%v)", i+1, werr)
			case out[i].Error != "":
				errs[i] = fmt.Errorf("worker %d: %s", i+1, out[i].Error)
			case werr != nil:
				errs[i] = fmt.Errorf("worker %d: %w", i+1, werr)
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return out, err
	}
	return out, errors.Join(errs...)
}

// ProcessStat is one process's share of the experiment.
type ProcessStat struct {
	ID       string  `json:"id"`
	Acquired int     `json:"acquired"`
	Share    float64 `json:"share"`
	Failures int     `json:"failures"`
	// FinishedAfter is when the process finished, from the experiment's start.
	FinishedAfter time.Duration `json:"finished_after_ns"`
	// OthersAtFinish is the smallest progress (acquisitions done / ops) of any other
	// process at the moment this one finished: 1 means everybody was done too.
	OthersAtFinish float64       `json:"others_at_finish"`
	MaxWait        time.Duration `json:"max_wait_ns"`
}

// Summary is the aggregate of an experiment.
type Summary struct {
	Label    string        `json:"label,omitempty"`
	Clients  int           `json:"clients"`
	Ops      int           `json:"ops"`
	Total    int           `json:"total"`
	Duration time.Duration `json:"duration_ns"`
	MeanWait time.Duration `json:"mean_wait_ns"`
	P50Wait  time.Duration `json:"p50_wait_ns"`
	P99Wait  time.Duration `json:"p99_wait_ns"`
	P999Wait time.Duration `json:"p999_wait_ns"` // the 99.9th percentile: the tail without its few longest
	MaxWait  time.Duration `json:"max_wait_ns"`
	// PerSecond is acquisitions (handoffs) per second over the whole experiment.
	PerSecond float64 `json:"per_second"`
	// Handoff is the gap between a release and the next acquisition by anyone.
	HandoffMean time.Duration `json:"handoff_mean_ns"`
	HandoffP50  time.Duration `json:"handoff_p50_ns"`
	HandoffP99  time.Duration `json:"handoff_p99_ns"`
	// MinOthersAtFinish is the smallest OthersAtFinish over the processes: the
	// fairness of completion (1 = all finished together).
	MinOthersAtFinish float64       `json:"min_others_at_finish"`
	Processes         []ProcessStat `json:"processes"`
}

// Summarize aggregates the results of one experiment in which every process was
// asked for ops acquisitions.
func Summarize(label string, ops int, results []WorkerResult) Summary {
	s := Summary{Label: label, Clients: len(results), Ops: ops}
	var waits []int64
	type event struct {
		at      int64
		release bool
	}
	var events []event
	start, end := int64(0), int64(0)
	for _, r := range results {
		waits = append(waits, r.Waits...)
		for _, a := range r.Acquired {
			events = append(events, event{at: a})
		}
		for _, x := range r.Released {
			events = append(events, event{at: x, release: true})
		}
		if start == 0 || r.Started < start {
			start = r.Started
		}
		end = max(end, r.Finished)
	}
	s.Total = len(waits)
	s.Duration = time.Duration(end - start)
	if s.Total > 0 {
		sorted := slices.Clone(waits)
		slices.Sort(sorted)
		var sum int64
		for _, w := range sorted {
			sum += w
		}
		s.MeanWait = time.Duration(sum / int64(len(sorted)))
		s.P50Wait = time.Duration(Percentile(sorted, 0.50))
		s.P99Wait = time.Duration(Percentile(sorted, 0.99))
		s.P999Wait = time.Duration(Percentile(sorted, 0.999))
		s.MaxWait = time.Duration(sorted[len(sorted)-1])
	}
	if s.Duration > 0 {
		s.PerSecond = float64(s.Total) / s.Duration.Seconds()
	}
	sort.Slice(events, func(i, j int) bool { return events[i].at < events[j].at })
	var handoffs []int64
	lastRelease := int64(0)
	for _, e := range events {
		switch {
		case e.release:
			lastRelease = e.at
		case lastRelease != 0:
			handoffs = append(handoffs, max(e.at-lastRelease, 0))
			lastRelease = 0
		}
	}
	if len(handoffs) > 0 {
		slices.Sort(handoffs)
		var sum int64
		for _, h := range handoffs {
			sum += h
		}
		s.HandoffMean = time.Duration(sum / int64(len(handoffs)))
		s.HandoffP50 = time.Duration(Percentile(handoffs, 0.50))
		s.HandoffP99 = time.Duration(Percentile(handoffs, 0.99))
	}
	s.MinOthersAtFinish = 1
	for i, r := range results {
		ps := ProcessStat{ID: r.ID, Acquired: len(r.Waits), Failures: r.Failures, FinishedAfter: time.Duration(r.Finished - start), OthersAtFinish: 1}
		if s.Total > 0 {
			ps.Share = float64(ps.Acquired) / float64(s.Total)
		}
		for _, w := range r.Waits {
			ps.MaxWait = max(ps.MaxWait, time.Duration(w))
		}
		for j, o := range results {
			if i == j || ops <= 0 {
				continue
			}
			done := 0
			for _, a := range o.Acquired {
				if a <= r.Finished {
					done++
				}
			}
			ps.OthersAtFinish = min(ps.OthersAtFinish, float64(done)/float64(ops))
		}
		s.MinOthersAtFinish = min(s.MinOthersAtFinish, ps.OthersAtFinish)
		s.Processes = append(s.Processes, ps)
	}
	return s
}

// Percentile returns the nearest-rank percentile p (0 to 1) of sorted values; 0 when there are none.
func Percentile(sorted []int64, p float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// WriteText prints the summary as a human-readable report.
func (s Summary) WriteText(w io.Writer) error {
	var b strings.Builder
	if s.Label != "" {
		fmt.Fprintf(&b, "%s: ", s.Label)
	}
	fmt.Fprintf(&b, "%d processes x %d acquisitions = %d in %v (%.1f acquisitions/s)\n", s.Clients, s.Ops, s.Total, s.Duration.Round(time.Millisecond), s.PerSecond)
	fmt.Fprintf(&b, "wait:     mean %v  p50 %v  p99 %v  p99.9 %v  max %v\n", Round(s.MeanWait), Round(s.P50Wait), Round(s.P99Wait), Round(s.P999Wait), Round(s.MaxWait))
	fmt.Fprintf(&b, "handoff:  mean %v  p50 %v  p99 %v (release to next acquisition)\n", Round(s.HandoffMean), Round(s.HandoffP50), Round(s.HandoffP99))
	fmt.Fprintf(&b, "%-8s %9s %7s %9s %12s %10s %12s\n", "process", "acquired", "share", "failures", "finished", "max wait", "others done")
	for _, p := range s.Processes {
		fmt.Fprintf(&b, "%-8s %9d %6.1f%% %9d %12v %10v %11.0f%%\n", p.ID, p.Acquired, 100*p.Share, p.Failures,
			p.FinishedAfter.Round(time.Millisecond), Round(p.MaxWait), 100*p.OthersAtFinish)
	}
	fmt.Fprintf(&b, "fairness: when the first process finished, the slowest other had done %.0f%% of its acquisitions\n", 100*s.MinOthersAtFinish)
	_, err := io.WriteString(w, b.String())
	return err
}

// Round rounds a wait for a report: to the millisecond above a second, to 10µs above
// a millisecond, else to the microsecond.
func Round(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}

// StartAt returns the moment the workers should begin, far enough ahead for every
// process to start and connect, so that they contend from the same instant.
func StartAt(clients int) time.Time {
	return time.Now().Add(300*time.Millisecond + time.Duration(clients)*30*time.Millisecond)
}

// SleepUntil waits until t or ctx's end.
func SleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
