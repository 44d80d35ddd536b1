package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/redlock/redlock/internal/bench"
	"github.com/redlock/redlock/internal/connect"
	"github.com/redlock/redlock/internal/human"
	"github.com/redlock/redlock/quorum"
)

// benchArgs are the arguments of bench and bench-worker.
type benchArgs struct {
	common
	clients, ops int
	fair         bool
	hold         time.Duration
	name         string
}

func (b *benchArgs) flags(f *Flags) {
	f.Int(&b.clients, "clients", "N", 5, "processes (default 5)")
	f.Int(&b.ops, "ops", "K", 100, "acquisitions per process (default 100)")
	f.Bool(&b.fair, "fair", "take the lock in fair (FIFO) mode")
	f.Duration(&b.hold, "hold", 0, "how long each acquisition holds the lock (default 0)").atLeast(0)
	f.String(&b.name, "name", "NAME", "redlock-bench", "the lock name (default redlock-bench)")
	b.jsonFlag(f)
	b.common.flags(f)
}

func (b *benchArgs) parse(p *parsed) error {
	if err := p.noArgs(""); err != nil {
		return err
	}
	switch {
	case b.clients < 1 || b.clients > 256:
		return usagef("-clients must be between 1 and 256, got %d", b.clients)
	case b.ops < 1:
		return usagef("-ops must be at least 1, got %d", b.ops)
	case b.name == "":
		return usagef("-name must not be empty")
	}
	if err := b.check(); err != nil {
		return err
	}
	if !p.given("timeout") {
		b.timeout = benchDefaultTimeout
	}
	return nil
}

var _ = define(&Command{
	Name:     "bench",
	Synopsis: "contention experiment: N processes take one lock K times",
	About: `
Reproduces the experiment of the fair-lock thesis on the masters of the topology
file: N operating-system processes (this binary, re-executed) each take the lock
NAME K times, holding it D each time, all starting at the same instant. It prints
the mean, p50, p99 and maximum wait for the lock, the handoffs per second (and the
time from a release to the next acquisition), each process's share of the
acquisitions, and when each process finished (with the smallest progress of any
other process at that moment: 100% means nobody was starved).

The lock uses the TTL of NAME's lock policy. With -fair the processes queue in
FIFO order (as a 'fair = true' policy would); otherwise they retry with the
cluster's retry policy and are woken when the lock is released. -timeout bounds
the whole experiment here (default 2m).`,
	Exits: []Exit{
		{0, "the experiment ran"},
		{1, "error (masters unreachable, a process failed, timeout, interrupted)"},
		exitBadInput,
	},
}, runBench)

// benchWorkerArgs are the arguments of one process of the experiment.
type benchWorkerArgs struct {
	benchArgs
	id      string
	startNS int64
}

func (b *benchWorkerArgs) flags(f *Flags) {
	b.benchArgs.flags(f)
	b.warnings = warnNever // bench showed them
	b.id = "p"
	f.hidden(stringValue{&b.id}, "id")
	f.hidden(int64Value{&b.startNS}, "start")
}

var benchWorkerCmd = define(&Command{
	Name:     "bench-worker",
	Synopsis: "one process of redlock bench (started by redlock bench; prints one JSON result)",
	Exits: []Exit{
		{0, "the process took the lock -ops times"},
		{1, "error"},
		exitBadInput,
	},
	Hidden: true,
}, runBenchWorker)

// benchDefaultTimeout bounds the experiment when -timeout is not given.
const benchDefaultTimeout = 2 * time.Minute

// benchJSON is bench -json: bench.Summary with durations in the JSON unit.
type benchJSON struct {
	Label             string             `json:"label,omitempty"`
	Clients           int                `json:"clients"`
	Ops               int                `json:"ops"`
	Total             int                `json:"total"`
	DurationMS        float64            `json:"duration_ms"`
	MeanWaitMS        float64            `json:"mean_wait_ms"`
	P50WaitMS         float64            `json:"p50_wait_ms"`
	P99WaitMS         float64            `json:"p99_wait_ms"`
	MaxWaitMS         float64            `json:"max_wait_ms"`
	PerSecond         float64            `json:"per_second"`
	HandoffMeanMS     float64            `json:"handoff_mean_ms"`
	HandoffP50MS      float64            `json:"handoff_p50_ms"`
	HandoffP99MS      float64            `json:"handoff_p99_ms"`
	MinOthersAtFinish float64            `json:"min_others_at_finish"`
	Processes         []benchProcessJSON `json:"processes"`
	sum               bench.Summary
}

type benchProcessJSON struct {
	ID              string  `json:"id"`
	Acquired        int     `json:"acquired"`
	Share           float64 `json:"share"`
	Failures        int     `json:"failures"`
	FinishedAfterMS float64 `json:"finished_after_ms"`
	OthersAtFinish  float64 `json:"others_at_finish"`
	MaxWaitMS       float64 `json:"max_wait_ms"`
}

func toBenchJSON(s bench.Summary) benchJSON {
	out := benchJSON{Label: s.Label, Clients: s.Clients, Ops: s.Ops, Total: s.Total, DurationMS: ms(s.Duration),
		MeanWaitMS: ms(s.MeanWait), P50WaitMS: ms(s.P50Wait), P99WaitMS: ms(s.P99Wait), MaxWaitMS: ms(s.MaxWait),
		PerSecond: s.PerSecond, HandoffMeanMS: ms(s.HandoffMean), HandoffP50MS: ms(s.HandoffP50), HandoffP99MS: ms(s.HandoffP99),
		MinOthersAtFinish: s.MinOthersAtFinish, Processes: []benchProcessJSON{}, sum: s}
	for _, p := range s.Processes {
		out.Processes = append(out.Processes, benchProcessJSON{ID: p.ID, Acquired: p.Acquired, Share: p.Share, Failures: p.Failures,
			FinishedAfterMS: ms(p.FinishedAfter), OthersAtFinish: p.OthersAtFinish, MaxWaitMS: ms(p.MaxWait)})
	}
	return out
}

func (b benchJSON) human(env *Env) error { return b.sum.WriteText(env.Stdout) }

// stringValue and int64Value are the internal flags of bench-worker.
type stringValue struct{ p *string }

func (v stringValue) String() string {
	if v.p == nil {
		return ""
	}
	return *v.p
}
func (v stringValue) Set(s string) error { *v.p = s; return nil }

type int64Value struct{ p *int64 }

func (v int64Value) String() string {
	if v.p == nil {
		return ""
	}
	return strconv.FormatInt(*v.p, 10)
}

func (v int64Value) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("%q is not a whole number", s)
	}
	*v.p = n
	return nil
}

func runBench(ctx context.Context, env *Env, bf *benchArgs) error {
	cfg, err := bf.load(env)
	if err != nil {
		return err
	}
	if ttl := cfg.Cluster.PolicyFor(bf.name).TTL; bf.hold >= ttl {
		return usagef("-hold %s must be below the lock's TTL %s", human.Duration(bf.hold), human.Duration(ttl))
	}
	self, err := os.Executable()
	if err != nil {
		return failf(ExitError, "cannot re-execute itself: %v", err)
	}
	// The workers load the same cluster: the file, or the -masters list through
	// the environment (a redis:// URL may carry a password: not on a command line).
	where := []string{"-config", bf.config}
	if bf.masters != "" {
		where = nil
	} else if abs, err := filepath.Abs(bf.config); err == nil {
		where[1] = abs
	}
	ctx, cancel := context.WithTimeout(ctx, bf.timeout)
	defer cancel()
	start := bench.StartAt(bf.clients)
	cmds := make([]*exec.Cmd, bf.clients)
	for i := range cmds {
		wargs := append([]string{benchWorkerCmd.Name}, where...)
		wargs = append(wargs, "-timeout", bf.timeout.String(),
			"-ops", strconv.Itoa(bf.ops), "-hold", bf.hold.String(), "-name", bf.name,
			"-id", "p"+strconv.Itoa(i+1), "-start", strconv.FormatInt(start.UnixNano(), 10))
		if bf.fair {
			wargs = append(wargs, "-fair")
		}
		c := exec.CommandContext(ctx, self, wargs...)
		// Variables go through the environment, not the command line, where any user
		// of the machine could read them.
		c.Env = os.Environ()
		if bf.masters != "" {
			c.Env = append(c.Env, envMasters+"="+bf.masters)
		}
		for k, v := range bf.vars.m {
			c.Env = append(c.Env, "REDLOCK_VAR_"+k+"="+v)
		}
		// On interruption or timeout the workers stop and release what they hold.
		c.Cancel = func() error { return c.Process.Signal(syscall.SIGINT) }
		c.WaitDelay = 10 * time.Second
		cmds[i] = c
	}
	mode := "plain"
	if bf.fair {
		mode = "fair"
	}
	fmt.Fprintf(env.Stderr, "redlock bench: %d processes x %d acquisitions of %s (%s mode, hold %s) on %d masters\n",
		bf.clients, bf.ops, cfg.Cluster.KeyPrefix+bf.name, mode, human.Duration(bf.hold), len(cfg.Cluster.Masters))
	results, err := bench.RunProcesses(ctx, cmds, env.Stderr)
	if err != nil {
		return fail(ExitError, redacted(err, cfg.Redact))
	}
	if err := show(env, bf.json, toBenchJSON(bench.Summarize(mode, bf.ops, results))); err != nil {
		return fail(ExitError, err)
	}
	return nil
}

// runBenchWorker is one process of the experiment: it takes the lock -ops times and
// prints a bench.WorkerResult as JSON.
func runBenchWorker(ctx context.Context, env *Env, bw *benchWorkerArgs) error {
	bf, id, startNS := &bw.benchArgs, &bw.id, &bw.startNS
	cfg, err := bf.load(env)
	if err != nil {
		return err
	}
	quietRedis()
	m, err := connect.Manager(cfg.Cluster)
	if err != nil {
		return fail(ExitError, redacted(err, cfg.Redact))
	}
	defer m.Close()
	ctx, cancel := context.WithTimeout(ctx, bf.timeout)
	defer cancel()
	ttl := cfg.Cluster.PolicyFor(bf.name).TTL
	var opts []quorum.LockOption
	if bf.fair {
		opts = append(opts, quorum.WithFair())
	}
	// Warm the connections before the common start.
	if l, err := m.TryAcquire(ctx, bf.name+"/warm-"+*id, ttl); err == nil {
		_ = l.Release(ctx)
	}
	if err := bench.SleepUntil(ctx, time.Unix(0, *startNS)); err != nil {
		return fail(ExitError, err)
	}
	acquire := func(ctx context.Context) (func(), error) {
		l, err := m.Acquire(ctx, bf.name, ttl, opts...)
		if err != nil {
			return nil, err
		}
		return func() {
			rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
			defer rcancel()
			_ = l.Release(rctx)
		}, nil
	}
	res := bench.Work(ctx, *id, acquire, bf.ops, bf.hold)
	if res.Error != "" {
		res.Error = cfg.Redact(res.Error)
	}
	if err := json.NewEncoder(env.Stdout).Encode(res); err != nil {
		return fail(ExitError, err)
	}
	if res.Error != "" {
		return &exitError{code: ExitError, err: errors.New(res.Error), shown: true}
	}
	return nil
}
