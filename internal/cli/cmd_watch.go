package cli

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/internal/health"
	"github.com/redlock/redlock/topology"
)

// watchArgs are the arguments of watch.
type watchArgs struct {
	common
	interval time.Duration
	match    string
}

func (a *watchArgs) flags(f *Flags) {
	f.Duration(&a.interval, "interval", time.Second, "time between snapshots (default 1s)").atLeast(positive)
	f.String(&a.match, "match", "GLOB", "*", "only locks whose names match GLOB (default all)")
	f.Bool(&a.json, "json", "JSON lines, one snapshot a line (default: one human line a snapshot)")
	a.metricsFlagOn(f)
	a.common.flags(f)
}

var _ = define(&Command{
	Name:     "watch",
	Synopsis: "a snapshot of nodes and locks every interval (JSON lines with -json)",
	About: `
Prints a snapshot of the cluster every interval until Ctrl-C: without -json one
line (time, healthy masters, locks by state, and what changed since the last
line: masters that went down or came back, findings that appeared or cleared);
with -json one JSON object per line, for scripts and dashboards: {"time",
"quorum", "total", "healthy", "nodes": [...], "locks": [...], "findings": [...]}.
"nodes" holds each master's health as 'redlock nodes -json' reports it (state,
latency, role, version, uptime, quarantine), except that its findings are listed
once in "findings", each with the masters it concerns; "locks" holds every lock
as 'redlock locks -json' reports it. A snapshot whose lock listing failed (fewer
than a quorum of masters answered) carries "error" and keeps going. -timeout
bounds each snapshot.`,
	Exits: []Exit{
		{0, "stopped by Ctrl-C (SIGINT/SIGTERM)"},
		{1, "error (stdout closed)"},
		exitBadInput,
	},
}, withSession(runWatch))

// snapshotJSON is one line of watch.
type snapshotJSON struct {
	Time    time.Time       `json:"time"`
	Quorum  int             `json:"quorum"`
	Total   int             `json:"total"`
	Healthy int             `json:"healthy"`
	Nodes   []watchNodeJSON `json:"nodes"`
	Locks   []lockJSON      `json:"locks"`
	// Primitives are the locks seen as what wrote them (prim_view.go).
	Primitives []primitiveJSON `json:"primitives"`
	// Findings lists each finding once, with the masters it concerns: the same
	// long text is not repeated per master.
	Findings []findingJSON `json:"findings"`
	Error    string        `json:"error,omitempty"`
	// states counts the primitives by state (admin.Primitive.State): a
	// multi-name hold, a semaphore, a name's shared holders or an election count
	// once, bookkeeping keys never.
	states map[admin.LockState]int
}

// watchNodeJSON is a master's health in a watch line: its findings by code.
type watchNodeJSON struct {
	healthJSON
	// Findings are the codes of the master's findings (the snapshot's findings
	// has their text).
	Findings []string `json:"findings"`
}

// findingJSON is a finding and the masters that report it.
type findingJSON struct {
	topology.Finding
	Masters []string `json:"masters"`
}

// groupedFindings groups identical findings across masters, in the order they
// are first seen.
func groupedFindings(hs []topology.NodeHealth) []findingJSON {
	out := []findingJSON{}
	for _, g := range health.GroupFindings(hs) {
		out = append(out, findingJSON{Finding: g.Finding, Masters: g.Masters})
	}
	return out
}

// watchLine is one line of watch: a snapshot, and the one before for the human
// line's changes.
type watchLine struct {
	snapshotJSON
	prev *snapshotJSON
}

// humanLine is the snapshot in one line for a terminal, with what changed since
// the previous one: masters down or back, findings raised or cleared.
func (l watchLine) humanLine() string {
	s, prev := l.snapshotJSON, l.prev
	states := s.states
	line := fmt.Sprintf("%s  %d/%d masters healthy (quorum %d)  locks: %d held, %d partial, %d contested, %d orphaned",
		s.Time.Format("15:04:05"), s.Healthy, s.Total, s.Quorum, states[admin.StateHeld], states[admin.StatePartial], states[admin.StateContested], states[admin.StateOrphaned])
	if prev != nil {
		was := map[string]string{}
		for _, n := range prev.Nodes {
			was[n.Master] = string(n.State)
		}
		for _, n := range s.Nodes {
			if w, ok := was[n.Master]; ok && w != string(n.State) {
				line += fmt.Sprintf("  [%s: %s -> %s]", escape.Line(n.Master, 30), w, n.State)
			}
		}
		seen := map[string]bool{}
		for _, f := range prev.Findings {
			seen[findingID(f)] = true
		}
		now := map[string]bool{}
		for _, f := range s.Findings {
			now[findingID(f)] = true
			if !seen[findingID(f)] {
				line += fmt.Sprintf("  [+%s %s on %s]", f.Severity, f.Code, escape.Line(strings.Join(f.Masters, ","), 60))
			}
		}
		for _, f := range prev.Findings {
			if !now[findingID(f)] {
				line += fmt.Sprintf("  [cleared %s]", f.Code)
			}
		}
	} else {
		for _, f := range s.Findings {
			line += fmt.Sprintf("  [%s %s on %s]", f.Severity, f.Code, escape.Line(strings.Join(f.Masters, ","), 60))
		}
	}
	if s.Error != "" {
		line += "  error: " + escape.Line(s.Error, 200)
	}
	return line
}

// findingID is what makes a finding the same one from line to line: its code
// and the masters it concerns, not its text, which may count down (a
// quarantine's time left) or carry a figure that moves.
func findingID(f findingJSON) string {
	return f.Code + "\x00" + strings.Join(f.Masters, "\x00")
}

func runWatch(ctx context.Context, env *Env, s *lockSession, a *watchArgs) error {
	prober, err := health.NewProber(s.cluster)
	if err != nil {
		return s.fail(ExitError, err)
	}
	defer prober.Close()
	tick := time.NewTicker(a.interval)
	defer tick.Stop()
	var prev *snapshotJSON
	for {
		snap := s.snapshot(ctx, prober, a.match, a.timeout)
		if ctx.Err() != nil {
			return nil
		}
		if err := showLine(env, a.json, watchLine{snapshotJSON: snap, prev: prev}); err != nil {
			return s.fail(ExitError, fmt.Errorf("write: %w", err))
		}
		prev = &snap
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// snapshot probes the nodes and lists the locks concurrently.
func (s *lockSession) snapshot(ctx context.Context, prober *health.Prober, match string, timeout time.Duration) snapshotJSON {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	snap := snapshotJSON{Time: time.Now(), Quorum: s.cluster.Quorum(), Total: len(s.cluster.Masters), Locks: []lockJSON{}, Primitives: []primitiveJSON{}, Nodes: []watchNodeJSON{}}
	var nodes []topology.NodeHealth
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		nodes = prober.Probe(cctx)
	}()
	lst, err := s.adm().Inspect(cctx, match)
	wg.Wait()
	if lst != nil {
		snap.Locks = s.listingJSON(lst, err).Locks
		prims, perr := s.adm().Primitives(cctx, lst)
		snap.Primitives = s.primitivesJSON(prims)
		snap.states = map[admin.LockState]int{}
		for i := range prims {
			snap.states[prims[i].State()]++
		}
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
		wn := watchNodeJSON{healthJSON: hj, Findings: []string{}}
		for _, f := range h.Findings {
			wn.Findings = append(wn.Findings, f.Code)
		}
		snap.Nodes = append(snap.Nodes, wn)
	}
	snap.Findings = groupedFindings(nodes)
	return snap
}
