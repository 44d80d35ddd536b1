package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"

	experiment "github.com/redlock/redlock/internal/bench"
)

// The masters' share of a benchmark's waits, measured on the masters: how long
// their commands ran (Redis's own latency tracking, INFO latencystats: the
// percentiles of each command's time inside the server), whether anything in a
// master took a millisecond or more (the latency monitor at 1 ms: a slow command
// or script, an active expiry cycle, a fork, ...: LATENCY LATEST), and how long
// the masters' threads waited for a processor (their schedstat, as the workers'
// in experiment.SchedStats). A round that takes milliseconds while the masters'
// own work stays in microseconds and nothing crossed the monitor's threshold was
// spent outside the masters' work: in the network stack or waiting for a processor.

// masterTime is the masters' figures over one row of a benchmark.
type masterTime struct {
	addrs   []string
	pids    []int
	threads []experiment.SchedStats
	err     error
}

// watchMasters resets the masters' latency figures and reads their threads'
// counters; finish reports the span since.
func watchMasters(tb testing.TB, addrs []string) *masterTime {
	tb.Helper()
	mt := &masterTime{addrs: addrs}
	ctx := context.Background()
	for _, a := range addrs {
		c := redis.NewClient(&redis.Options{Addr: a})
		err := firstError(
			c.ConfigSet(ctx, "latency-monitor-threshold", "1").Err(),
			c.Do(ctx, "LATENCY", "RESET").Err(),
			c.ConfigResetStat(ctx).Err(),
		)
		pid := 0
		if err == nil {
			if pid = int(infoInt(c.Info(ctx, "server").Val(), "process_id")); pid == 0 {
				err = errors.New("INFO server has no process_id")
			}
		}
		_ = c.Close()
		if err != nil {
			mt.err = fmt.Errorf("master %s: %w", a, err)
			return mt
		}
		s, _ := experiment.ThreadSched(pid)
		mt.pids, mt.threads = append(mt.pids, pid), append(mt.threads, s)
	}
	return mt
}

// finish reads the masters' figures since watchMasters and sums them up; acqs is
// the number of acquisitions of the row, for the counts per acquisition (the
// masters' reads of their connections, each a wake-up of the master, and the
// commands they ran, those run by scripts included).
func (mt *masterTime) finish(acqs int) string {
	if mt.err != nil {
		return "the masters' own time: not measured: " + mt.err.Error()
	}
	ctx := context.Background()
	var threads experiment.SchedStats
	var events []string
	worst := map[string]float64{} // command -> the worst master's p99.9, µs
	p99 := map[string]float64{}
	calls := map[string]int64{}
	var reads, usec int64
	for i, a := range mt.addrs {
		if now, err := experiment.ThreadSched(mt.pids[i]); err == nil {
			threads = threads.Add(now.Sub(mt.threads[i]))
		}
		c := redis.NewClient(&redis.Options{Addr: a})
		if latest, err := c.Do(ctx, "LATENCY", "LATEST").Slice(); err == nil {
			for _, e := range latest {
				if ev, ok := e.([]any); ok && len(ev) >= 4 {
					events = append(events, fmt.Sprintf("%s on master %d: %v ms (the longest; latest %v ms)",
						printable(fmt.Sprint(ev[0])), i+1, ev[3], ev[2]))
				}
			}
		}
		reads += infoInt(c.Info(ctx, "stats").Val(), "total_reads_processed")
		cs := commandCalls(c.Info(ctx, "commandstats").Val())
		for cmd, n := range cs.calls {
			calls[cmd] += n
		}
		usec += cs.usec["evalsha"] + cs.usec["eval"]
		for cmd, ps := range latencyStats(c.Info(ctx, "latencystats").Val()) {
			worst[cmd] = max(worst[cmd], ps["p99.9"])
			p99[cmd] = max(p99[cmd], ps["p99"])
		}
		_ = c.Close()
	}
	cmds := make([]string, 0, len(worst))
	for cmd := range worst {
		cmds = append(cmds, cmd)
	}
	slices.Sort(cmds)
	var sb strings.Builder
	sb.WriteString("the masters' own time per command (the worst master's p99 / p99.9):")
	for _, cmd := range cmds {
		fmt.Fprintf(&sb, " %s %.0f / %.0f µs;", printable(cmd), p99[cmd], worst[cmd])
	}
	if len(events) == 0 {
		sb.WriteString(" nothing in a master took 1 ms or more (latency monitor)")
	} else {
		sb.WriteString(" took 1 ms or more (latency monitor): " + strings.Join(events, ", "))
	}
	if threads.Slices > 0 {
		sb.WriteString("; the masters' " + threads.Threads())
	}
	if acqs > 0 {
		fmt.Fprintf(&sb, "\nper acquisition, on all the masters: %.1f reads of a connection, %.1f µs in scripts (EVALSHA, EVAL: INFO commandstats); commands, those scripts ran included:",
			float64(reads)/float64(acqs), float64(usec)/float64(acqs))
		names := make([]string, 0, len(calls))
		for cmd := range calls {
			names = append(names, cmd)
		}
		slices.SortFunc(names, func(a, b string) int { return int(calls[b] - calls[a]) })
		for _, cmd := range names {
			if per := float64(calls[cmd]) / float64(acqs); per >= 0.05 {
				fmt.Fprintf(&sb, " %s %.1f;", printable(cmd), per)
			}
		}
	}
	return sb.String()
}

// commandStats is what commandCalls reads of INFO commandstats, per command: its
// calls and the time in them, those a script ran included (and counted in the
// script's time too).
type commandStats struct {
	calls, usec map[string]int64
}

// commandCalls parses INFO commandstats ("cmdstat_evalsha:calls=12,usec=40,...").
// The commands a script runs are counted apart under their own names, their time
// within the script's.
func commandCalls(info string) commandStats {
	out := commandStats{calls: map[string]int64{}, usec: map[string]int64{}}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		cmd, found := strings.CutPrefix(name, "cmdstat_")
		if !ok || !found {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "calls":
				out.calls[cmd] = n
			case "usec":
				out.usec[cmd] = n
			}
		}
	}
	return out
}

// latencyStats parses INFO latencystats: per command, its percentiles in µs
// ("latency_percentiles_usec_evalsha:p50=11.007,p99=27.007,p99.9=55.039").
func latencyStats(info string) map[string]map[string]float64 {
	out := map[string]map[string]float64{}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		cmd, found := strings.CutPrefix(name, "latency_percentiles_usec_")
		if !ok || !found {
			continue
		}
		ps := map[string]float64{}
		for _, kv := range strings.Split(rest, ",") {
			k, v, ok := strings.Cut(kv, "=")
			if f, err := strconv.ParseFloat(v, 64); ok && err == nil {
				ps[k] = f
			}
		}
		out[cmd] = ps
	}
	return out
}

// printable escapes the control characters of a string from a master (a latency
// event's or a command's name) for the report (strconv's quoting, without the
// quotes; the bench module does not import the console's escaping).
func printable(s string) string {
	q := strconv.QuoteToGraphic(s)
	return q[1 : len(q)-1]
}

func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// workersSched sums up the workers' waits for a processor (experiment.SchedStats):
// the worst goroutine figures of any worker, the threads' in all.
func workersSched(results []experiment.WorkerResult) string {
	var all experiment.SchedStats
	for _, r := range results {
		all = all.Add(r.Sched)
	}
	return "the workers (the worst one's goroutine figures, every thread's in all): " + all.String()
}

func TestLatencyStatsParse(t *testing.T) {
	info := "# Latencystats\r\nlatency_percentiles_usec_evalsha:p50=11.007,p99=27.007,p99.9=55.039\r\nlatency_percentiles_usec_ping:p50=1.003,p99=2.007,p99.9=4.015\r\n"
	assert.Equal(t, map[string]map[string]float64{
		"evalsha": {"p50": 11.007, "p99": 27.007, "p99.9": 55.039},
		"ping":    {"p50": 1.003, "p99": 2.007, "p99.9": 4.015},
	}, latencyStats(info))
	assert.Equal(t, `evil\x1b[2Jname\r\n`, printable("evil\x1b[2Jname\r\n"))
	stats := "# Commandstats\r\ncmdstat_evalsha:calls=12,usec=40,usec_per_call=3.33,rejected_calls=0,failed_calls=0\r\ncmdstat_ping:calls=3,usec=1\r\n"
	assert.Equal(t, commandStats{calls: map[string]int64{"evalsha": 12, "ping": 3}, usec: map[string]int64{"evalsha": 40, "ping": 1}}, commandCalls(stats))
}
