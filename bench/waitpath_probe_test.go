package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

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
	cpu      cpuShare
	cpu0     cpuTimes
}

func startProbe() *stallProbe {
	p := &stallProbe{stop: make(chan struct{}), done: make(chan struct{}), cpu0: readCPUTimes()}
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
	p.cpu = readCPUTimes().since(p.cpu0)
	return p
}

// pathsRun is what a run recorded besides the workers' results.
type pathsRun struct {
	paths    map[string][]acqPath // by worker id
	stalls   []stall
	runnable []runnable
	cpu      cpuShare
	waited   string               // who waited for what: the masters' own time, the processes' waits for a processor
	qwait    map[string][]qsample // the processes' run-queue waits over time, by name (envQWait)
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
	run := pathsRun{stalls: probe.stalls, runnable: probe.runnable, cpu: probe.cpu, paths: map[string][]acqPath{}}
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
