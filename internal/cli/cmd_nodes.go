package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/internal/health"
	"github.com/redlock/redlock/topology"
)

func init() {
	nodesCmd.Run = runNodes
	register(nodesCmd)
}

var nodesCmd = &Command{
	Name:     "nodes",
	Synopsis: "node health: state, latency, role, version, uptime, quarantine, clock, persistence, eviction",
	Usage: `Usage: redlock nodes [-json] [-config PATH] [-var NAME=VALUE] [-timeout D]

Probes every master of the topology (PING, TIME, INFO, CONFIG GET) and prints one
row per master with its findings below the table. -json prints one JSON document.

Flags:
  -json             one JSON document on stdout
` + commonUsage + `

Exit codes: 0 a quorum of masters is healthy (up, no error finding, not
quarantined), 1 fewer than a quorum is healthy or an error occurred, 2 usage.`,
}

// nodesJSON is the document `nodes -json` prints.
type nodesJSON struct {
	Cluster string       `json:"cluster"`
	Quorum  int          `json:"quorum"`
	Healthy int          `json:"healthy"`
	OK      bool         `json:"ok"`
	Nodes   []healthJSON `json:"nodes"`
}

func runNodes(ctx context.Context, env *Env, args []string) int {
	var cm common
	fs := newFlagSet(nodesCmd)
	cm.register(fs, env)
	jsonOut := cm.jsonFlag(fs, "one JSON document on stdout")
	if code, ok := parseNoArgs(env, nodesCmd, fs, &cm, args); !ok {
		return code
	}
	cfg, code := cm.load(env)
	if code != ExitOK {
		return ExitError
	}
	c := cfg.Cluster
	quietRedis()
	ctx, cancel := context.WithTimeout(ctx, cm.timeout)
	defer cancel()
	p, err := health.NewProber(c)
	if err != nil {
		fmt.Fprintf(env.Stderr, "redlock nodes: %s\n", escape.Text(cfg.Redact(err.Error())))
		return ExitError
	}
	defer p.Close()
	hs := p.Probe(ctx)
	now := time.Now()

	doc := nodesJSON{Cluster: c.Name, Quorum: c.Quorum(), Nodes: []healthJSON{}}
	for _, h := range hs {
		hj := toHealthJSON(h, now, func(s string) string { return s })
		if hj.Healthy {
			doc.Healthy++
		}
		doc.Nodes = append(doc.Nodes, hj)
	}
	doc.OK = doc.Healthy >= doc.Quorum

	var out strings.Builder
	if *jsonOut {
		if err := writeDoc(&out, doc); err != nil {
			fmt.Fprintf(env.Stderr, "redlock nodes: %v\n", err)
			return ExitError
		}
	} else {
		writeNodesTable(&out, hs, now)
		verdict := "quorum available"
		if !doc.OK {
			verdict = "BELOW QUORUM: locks cannot be taken"
		}
		fmt.Fprintf(&out, "\n%d/%d masters healthy, quorum %d: %s.\n", doc.Healthy, len(hs), doc.Quorum, verdict)
	}
	text := cfg.Redact(out.String())
	if !*jsonOut {
		text = escapeLines(text) // server answers and errors are in there
	}
	_, _ = io.WriteString(env.Stdout, text)
	if !doc.OK {
		return ExitError
	}
	return ExitOK
}

// writeNodesTable writes the health table and then the findings grouped across
// masters, as plan does (acknowledged ones left out).
func writeNodesTable(w io.Writer, hs []topology.NodeHealth, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MASTER\tADDRESS\tSTATE\tLATENCY\tROLE\tVERSION\tUPTIME\tQUARANTINE\tCLOCK\tPERSISTENCE\tEVICTION")
	for i := range hs {
		h := &hs[i]
		if !h.Reachable || h.AuthFailed {
			fmt.Fprintf(tw, "%s\t%s\t%s\t-\t-\t-\t-\t%s\t-\t-\t-\n", h.Master, h.Address, h.State(now), quarantineLeft(h, now))
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			h.Master, h.Address, h.State(now), fmtLatency(h.Latency), dash(h.Role), dash(h.Version),
			fmtUptime(h), quarantineLeft(h, now), fmtClock(h), h.Persistence(), h.EvictionPolicy())
	}
	_ = tw.Flush()
	health.WriteFindings(w, hs, false)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func fmtLatency(d time.Duration) string {
	if d < time.Millisecond {
		return d.Round(time.Microsecond).String()
	}
	return d.Round(10 * time.Microsecond).String()
}

func fmtUptime(h *topology.NodeHealth) string {
	if h.InfoError != "" {
		return "?"
	}
	return h.Uptime.String()
}

func quarantineLeft(h *topology.NodeHealth, now time.Time) string {
	if !now.Before(h.QuarantineUntil) {
		return "-"
	}
	return h.QuarantineUntil.Sub(now).Round(time.Second).String()
}

func fmtClock(h *topology.NodeHealth) string {
	if h.ClockUncertainty <= 0 {
		return "?"
	}
	sign := "+"
	if h.ClockOffset < 0 {
		sign = ""
	}
	round := func(d time.Duration) time.Duration {
		if d < time.Millisecond && d > -time.Millisecond {
			return d.Round(time.Microsecond)
		}
		return d.Round(100 * time.Microsecond)
	}
	return sign + round(h.ClockOffset).String() + "±" + round(h.ClockUncertainty).String()
}
