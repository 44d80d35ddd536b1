package cli

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redlock/redlock/internal/health"
	"github.com/redlock/redlock/topology"
)

var watchCmd = &Command{
	Name:     "watch",
	Synopsis: "JSON lines: a snapshot of nodes and locks every interval",
	Usage: `Usage: redlock watch [-interval D] -json [-config PATH] [-var name=value] [-timeout D]

Prints one JSON object per line every interval until Ctrl-C, for scripts and
dashboards: {"time", "quorum", "total", "healthy", "nodes": [...], "locks": [...]}.
"nodes" holds each master's health as 'redlock nodes -json' reports it (state,
latency, role, version, uptime, quarantine, findings); "locks" holds every lock as
'redlock locks -json' reports it. A snapshot whose lock listing failed (fewer than
a quorum of masters answered) carries "error" and keeps going. The output is
always JSON lines; -json is accepted for symmetry with the other commands.

Flags:
  -interval D  time between snapshots (default 1s)
  -match GLOB  only locks whose names match GLOB (default all)
  -json        JSON lines (the only format)
  -metrics-addr ADDR
               serve this process's metrics (Prometheus) at http://ADDR/metrics
` + commonUsage + `
                    (watch: bounds each snapshot)

Exit codes:
  0  stopped by Ctrl-C (SIGINT/SIGTERM)
  1  error (stdout closed)
  2  usage error or invalid topology file`,
}

func init() {
	watchCmd.Run = runWatch
	register(watchCmd)
}

// snapshotJSON is one line of watch.
type snapshotJSON struct {
	Time    time.Time    `json:"time"`
	Quorum  int          `json:"quorum"`
	Total   int          `json:"total"`
	Healthy int          `json:"healthy"`
	Nodes   []healthJSON `json:"nodes"`
	Locks   []lockJSON   `json:"locks"`
	// Primitives are the locks seen as what wrote them (prim_view.go).
	Primitives []primitiveJSON `json:"primitives"`
	Error      string          `json:"error,omitempty"`
}

func runWatch(ctx context.Context, env *Env, args []string) int {
	cmd := watchCmd
	fs := newFlagSet(cmd)
	var cf common
	cf.register(fs, env)
	interval := fs.Duration("interval", time.Second, "time between snapshots")
	match := fs.String("match", "*", "only locks matching GLOB")
	_ = fs.Bool("json", true, "JSON lines")
	cf.metricsFlagOn(fs)
	if code, ok := parseFlags(env, cmd, fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageErrorf(env, cmd, "unexpected argument %q", fs.Arg(0))
	}
	if *interval <= 0 {
		return usageErrorf(env, cmd, "-interval must be positive, got %v", *interval)
	}
	s, code := openSession(env, cmd, &cf)
	if s == nil {
		return code
	}
	defer s.close()
	prober, err := health.NewProber(s.cluster)
	if err != nil {
		return s.fail(env, cmd, err)
	}
	defer prober.Close()
	tick := time.NewTicker(*interval)
	defer tick.Stop()
	for {
		snap := s.snapshot(ctx, prober, *match, cf.timeout)
		if ctx.Err() != nil {
			return ExitOK
		}
		if err := writeLine(env.Stdout, snap); err != nil {
			return s.fail(env, cmd, fmt.Errorf("write: %w", err))
		}
		select {
		case <-ctx.Done():
			return ExitOK
		case <-tick.C:
		}
	}
}

// snapshot probes the nodes and lists the locks concurrently.
func (s *lockSession) snapshot(ctx context.Context, prober *health.Prober, match string, timeout time.Duration) snapshotJSON {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	snap := snapshotJSON{Time: time.Now(), Quorum: s.cluster.Quorum(), Total: len(s.cluster.Masters), Locks: []lockJSON{}, Primitives: []primitiveJSON{}}
	var nodes []topology.NodeHealth
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		nodes = prober.Probe(cctx)
	}()
	lst, err := s.m.Inspect(cctx, match)
	wg.Wait()
	if lst != nil {
		snap.Locks = s.listingJSON(lst, err).Locks
		prims, perr := s.m.Primitives(cctx, lst)
		snap.Primitives = s.primitivesJSON(prims)
		if err == nil {
			err = perr
		}
	}
	if err != nil {
		snap.Error = s.redact(err.Error())
	}
	now := time.Now()
	for _, h := range nodes {
		hj := toHealthJSON(h, now, s.redact)
		if hj.Healthy {
			snap.Healthy++
		}
		snap.Nodes = append(snap.Nodes, hj)
	}
	return snap
}
