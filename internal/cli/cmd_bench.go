package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/redlock/redlock/internal/bench"
	"github.com/redlock/redlock/internal/connect"
	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/quorum"
)

var benchCmd = &Command{
	Name:     "bench",
	Synopsis: "contention experiment: N processes take one lock K times",
	Usage: `Usage: redlock bench [-clients N] [-ops K] [-fair] [-hold D] [-name NAME] [-json] [-config PATH] [-var NAME=VALUE] [-timeout D]

Reproduces the experiment of the fair-lock thesis on the masters of the topology
file: N operating-system processes (this binary, re-executed) each take the lock
NAME K times, holding it D each time, all starting at the same instant. It prints
the mean, p50, p99 and maximum wait for the lock, the handoffs per second (and the
time from a release to the next acquisition), each process's share of the
acquisitions, and when each process finished (with the smallest progress of any
other process at that moment: 100% means nobody was starved).

The lock uses the TTL of NAME's lock policy. With -fair the processes queue in
FIFO order (as a 'fair = true' policy would); otherwise they retry with the
cluster's retry policy and are woken when the lock is released.

Flags:
  -clients N    processes (default 5)
  -ops K        acquisitions per process (default 100)
  -fair         take the lock in fair (FIFO) mode
  -hold D       how long each acquisition holds the lock (default 0)
  -name NAME    the lock name (default redlock-bench)
  -json         print one JSON document
` + commonUsage + ` (here: bounds the whole experiment; default 2m)

Exit codes:
  0  the experiment ran
  1  error (masters unreachable, a process failed, timeout, interrupted)
  2  usage error or invalid topology file`,
}

var benchWorkerCmd = &Command{
	Name:     "bench-worker",
	Synopsis: "one process of redlock bench",
	Usage:    "Usage: redlock bench-worker (started by redlock bench; prints one JSON result)",
	Hidden:   true,
}

func init() {
	benchCmd.Run = runBench
	benchWorkerCmd.Run = runBenchWorker
	register(benchCmd)
	register(benchWorkerCmd)
}

// benchDefaultTimeout bounds the experiment when -timeout is not given.
const benchDefaultTimeout = 2 * time.Minute

type benchFlags struct {
	cm      common
	clients int
	ops     int
	fair    bool
	hold    time.Duration
	name    string
}

func (b *benchFlags) register(fs interface {
	IntVar(*int, string, int, string)
	BoolVar(*bool, string, bool, string)
	DurationVar(*time.Duration, string, time.Duration, string)
	StringVar(*string, string, string, string)
}) {
	fs.IntVar(&b.clients, "clients", 5, "processes")
	fs.IntVar(&b.ops, "ops", 100, "acquisitions per process")
	fs.BoolVar(&b.fair, "fair", false, "fair (FIFO) mode")
	fs.DurationVar(&b.hold, "hold", 0, "hold time per acquisition")
	fs.StringVar(&b.name, "name", "redlock-bench", "lock name")
}

func runBench(ctx context.Context, env *Env, args []string) int {
	cmd := benchCmd
	fs := newFlagSet(cmd)
	var bf benchFlags
	bf.cm.register(fs, env)
	bf.register(fs)
	asJSON := fs.Bool("json", false, "JSON output")
	if code, ok := parseFlags(env, cmd, fs, args); !ok {
		return code
	}
	switch {
	case fs.NArg() > 0:
		return usageErrorf(env, cmd, "unexpected argument %q", fs.Arg(0))
	case bf.clients < 1 || bf.clients > 256:
		return usageErrorf(env, cmd, "-clients must be between 1 and 256, got %d", bf.clients)
	case bf.ops < 1:
		return usageErrorf(env, cmd, "-ops must be at least 1, got %d", bf.ops)
	case bf.hold < 0:
		return usageErrorf(env, cmd, "-hold must not be negative, got %v", bf.hold)
	case bf.name == "":
		return usageErrorf(env, cmd, "-name must not be empty")
	}
	if msg := bf.cm.check(); msg != "" {
		return usageErrorf(env, cmd, "%s", msg)
	}
	if !flagGiven(fs, "timeout") {
		bf.cm.timeout = benchDefaultTimeout
	}
	cfg, code := bf.cm.load(env)
	if code != ExitOK {
		return code
	}
	if ttl := cfg.Cluster.PolicyFor(bf.name).TTL; bf.hold >= ttl {
		return usageErrorf(env, cmd, "-hold %v must be below the lock's TTL %v", bf.hold, ttl)
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(env.Stderr, "redlock bench: cannot re-execute itself: %v\n", err)
		return ExitError
	}
	config, err := filepath.Abs(bf.cm.config)
	if err != nil {
		config = bf.cm.config
	}
	ctx, cancel := context.WithTimeout(ctx, bf.cm.timeout)
	defer cancel()
	start := bench.StartAt(bf.clients)
	cmds := make([]*exec.Cmd, bf.clients)
	for i := range cmds {
		wargs := []string{benchWorkerCmd.Name, "-config", config, "-timeout", bf.cm.timeout.String(),
			"-ops", strconv.Itoa(bf.ops), "-hold", bf.hold.String(), "-name", bf.name,
			"-id", "p" + strconv.Itoa(i+1), "-start", strconv.FormatInt(start.UnixNano(), 10)}
		if bf.fair {
			wargs = append(wargs, "-fair")
		}
		c := exec.CommandContext(ctx, self, wargs...)
		// Variables go through the environment, not the command line, where any user
		// of the machine could read them.
		c.Env = os.Environ()
		for k, v := range bf.cm.vars.m {
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
	fmt.Fprintf(env.Stderr, "redlock bench: %d processes x %d acquisitions of %s (%s mode, hold %v) on %d masters\n",
		bf.clients, bf.ops, cfg.Cluster.KeyPrefix+bf.name, mode, bf.hold, len(cfg.Cluster.Masters))
	results, err := bench.RunProcesses(ctx, cmds, env.Stderr)
	if err != nil {
		fmt.Fprintf(env.Stderr, "redlock bench: %s\n", escape.Text(cfg.Redact(err.Error())))
		return ExitError
	}
	sum := bench.Summarize(mode, bf.ops, results)
	if *asJSON {
		err = writeDoc(env.Stdout, sum)
	} else {
		err = sum.WriteText(env.Stdout)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "redlock bench: %v\n", err)
		return ExitError
	}
	return ExitOK
}

// runBenchWorker is one process of the experiment: it takes the lock -ops times and
// prints a bench.WorkerResult as JSON.
func runBenchWorker(ctx context.Context, env *Env, args []string) int {
	cmd := benchWorkerCmd
	fs := newFlagSet(cmd)
	var bf benchFlags
	bf.cm.register(fs, env)
	bf.register(fs)
	id := fs.String("id", "p", "process id")
	startNS := fs.Int64("start", 0, "start time, Unix ns")
	if code, ok := parseFlags(env, cmd, fs, args); !ok {
		return code
	}
	cfg, code := bf.cm.load(env)
	if code != ExitOK {
		return code
	}
	quietRedis()
	m, err := connect.Manager(cfg.Cluster)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s\n", escape.Text(cfg.Redact(err.Error())))
		return ExitError
	}
	defer m.Close()
	ctx, cancel := context.WithTimeout(ctx, bf.cm.timeout)
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
		fmt.Fprintf(env.Stderr, "%v\n", err)
		return ExitError
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
		return ExitError
	}
	if res.Error != "" {
		return ExitError
	}
	return ExitOK
}
