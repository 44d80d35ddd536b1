package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/redlock/redlock/internal/health"
	"github.com/redlock/redlock/internal/human"
	"github.com/redlock/redlock/topology"
)

// nodesArgs are the arguments of nodes.
type nodesArgs struct{ common }

func (a *nodesArgs) flags(f *Flags) {
	a.jsonFlag(f)
	a.common.flags(f)
}

var _ = define(&Command{
	Name:     "nodes",
	Synopsis: "node health: state, latency, role, version, uptime, quarantine, clock, persistence, eviction",
	About: `
Probes every master of the topology (PING, TIME, INFO, CONFIG GET) and prints one
row per master with its findings below the table. -json prints one JSON document.`,
	Exits: []Exit{
		{0, "a quorum of masters is healthy (up, no error finding, not quarantined)"},
		{1, "fewer than a quorum is healthy, or an error occurred"},
		exitBadInput,
	},
}, runNodes)

// nodesJSON is the document `nodes -json` prints.
type nodesJSON struct {
	Cluster string       `json:"cluster"`
	Quorum  int          `json:"quorum"`
	Healthy int          `json:"healthy"`
	OK      bool         `json:"ok"`
	Nodes   []healthJSON `json:"nodes"`
}

// nodesView is the output of nodes.
type nodesView struct {
	nodesJSON
	hs  []topology.NodeHealth
	now time.Time
}

func (v nodesView) human(env *Env) error {
	var out strings.Builder
	writeNodesTable(&out, v.hs, v.now)
	verdict := "quorum available"
	if !v.OK {
		verdict = "BELOW QUORUM: locks cannot be taken"
	}
	fmt.Fprintf(&out, "\n%d/%d masters healthy, quorum %d: %s.\n", v.Healthy, len(v.hs), v.Quorum, verdict)
	_, err := io.WriteString(env.Stdout, out.String())
	return err
}

func runNodes(ctx context.Context, env *Env, a *nodesArgs) error {
	cfg, err := a.load(env)
	if err != nil {
		return err
	}
	c := cfg.Cluster
	quietRedis()
	ctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	p, err := health.NewProber(c)
	if err != nil {
		return fail(ExitError, redacted(err, cfg.Redact))
	}
	defer p.Close()
	hs := p.Probe(ctx)
	now := time.Now()

	doc := nodesJSON{Cluster: c.Name, Quorum: c.Quorum(), Nodes: []healthJSON{}}
	for _, h := range hs {
		hj := toHealthJSON(h, now, cfg.Redact)
		if hj.Healthy {
			doc.Healthy++
		}
		doc.Nodes = append(doc.Nodes, hj)
	}
	doc.OK = doc.Healthy >= doc.Quorum
	var out strings.Builder
	if err := show(&Env{Stdout: &out}, a.json, nodesView{nodesJSON: doc, hs: hs, now: now}); err != nil {
		return fail(ExitError, err)
	}
	_, _ = io.WriteString(env.Stdout, cfg.Redact(out.String()))
	if !doc.OK {
		return &exitError{code: ExitError, err: fmt.Errorf("%d of %d masters healthy, fewer than the quorum %d", doc.Healthy, len(hs), doc.Quorum), shown: true, doc: skipDoc{}}
	}
	return nil
}

// writeNodesTable writes the health table and then the findings grouped across
// masters, as plan does (acknowledged ones left out), escaped once: server
// answers are in both.
func writeNodesTable(w io.Writer, hs []topology.NodeHealth, now time.Time) {
	var table strings.Builder
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MASTER\tADDRESS\tSTATE\tLATENCY\tROLE\tVERSION\tUPTIME\tQUARANTINE\tCLOCK\tPERSISTENCE\tEVICTION")
	for i := range hs {
		h := &hs[i]
		if !h.Reachable || h.AuthFailed {
			latency := "-"
			if h.Slow {
				latency = fmtLatency(h.Latency)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t-\t-\t-\t%s\t-\t-\t-\n", h.Master, h.Address, h.State(now), latency, quarantineLeft(h, now))
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			h.Master, h.Address, h.State(now), fmtLatency(h.Latency), dash(h.Role), dash(h.Version),
			fmtUptime(h), quarantineLeft(h, now), fmtClock(h), h.Persistence(), h.EvictionPolicy())
	}
	_ = tw.Flush()
	_, _ = io.WriteString(w, escapeLines(table.String()))
	health.WriteFindings(w, hs, false, nil)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func fmtLatency(d time.Duration) string { return human.Latency(d) }

func fmtUptime(h *topology.NodeHealth) string {
	if h.InfoError != "" {
		return "?"
	}
	return human.Duration(h.Uptime)
}

func quarantineLeft(h *topology.NodeHealth, now time.Time) string {
	if !now.Before(h.QuarantineUntil) {
		return "-"
	}
	return human.Duration(h.QuarantineUntil.Sub(now))
}

func fmtClock(h *topology.NodeHealth) string {
	if h.ClockUncertainty <= 0 {
		return "?"
	}
	sign := "+"
	if h.ClockOffset < 0 {
		sign = ""
	}
	return sign + human.Latency(h.ClockOffset) + "±" + human.Latency(h.ClockUncertainty)
}
