package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/redlock/redlock/hcl"
	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/internal/health"
	"github.com/redlock/redlock/topology"
)

func init() {
	planCmd.Run = runPlan
	register(planCmd)
}

var planCmd = &Command{
	Name:     "plan",
	Synopsis: "check every live master against the file and show the settings apply would change",
	Usage: `Usage: redlock plan [-json] [-detailed-exitcode] [-config PATH] [-var NAME=VALUE] [-timeout D]

Probes every master: reachable, credentials, role:master, standalone mode,
version, settings drift, eviction and persistence risk, uptime against the
restart quarantine, clock offset against the drift budget. Prints each master's
findings and the settings changes apply would make, then a summary line. Live
values are compared as Redis means them (sizes by bytes, yes/no, case, and
notify-keyspace-events as a set of flags), so a plan right after apply is empty.

Flags:
  -json               one JSON document on stdout
  -detailed-exitcode  exit 2 when changes are pending
` + commonUsage + `

Exit codes (as Terraform's):
  0  no changes, or changes without -detailed-exitcode
  1  error: a usage error, an invalid file, or a finding apply cannot fix (a master
     unreachable, credentials refused, a replica, failing persistence, a risky
     setting that the file does not declare)
  2  with -detailed-exitcode: changes pending that apply will make, including the
     error findings those changes fix (an eviction policy, persistence settings)`,
}

func runPlan(ctx context.Context, env *Env, args []string) int {
	var cm common
	fs := newFlagSet(planCmd)
	cm.register(fs, env)
	jsonOut := cm.jsonFlag(fs, "one JSON document on stdout")
	detailed := fs.Bool("detailed-exitcode", false, "exit 2 when changes are pending")
	if code, ok := parseNoArgs(env, planCmd, fs, &cm, args); !ok {
		return terraformUsage(code)
	}
	cfg, p, plan, code := probePlan(ctx, env, planCmd, &cm)
	if code != ExitOK {
		return code
	}
	defer p.Close()

	var out strings.Builder
	if *jsonOut {
		if err := writeDoc(&out, toPlanJSON(plan, time.Now(), cfg.Redact)); err != nil {
			fmt.Fprintf(env.Stderr, "redlock plan: %v\n", err)
			return ExitError
		}
	} else {
		writePlan(&out, cfg.Cluster, plan)
	}
	text := cfg.Redact(out.String())
	if !*jsonOut {
		text = escapeLines(text) // server answers and errors are in there
	}
	_, _ = io.WriteString(env.Stdout, text)
	switch {
	case plan.Summary.Unfixable() > 0:
		return ExitError
	case plan.Summary.Errors > 0 && !*detailed:
		return ExitError
	case plan.Summary.Changes > 0 && *detailed:
		return ExitChanges
	default:
		return ExitOK
	}
}

// terraformUsage maps a usage error to 1 for plan and apply, whose 2 means
// "changes pending" to a CI gate (as Terraform's): a typo must not look like one.
// -h (exit 0) is kept.
func terraformUsage(code int) int {
	if code == ExitUsage {
		return ExitError
	}
	return code
}

// probePlan loads the file, probes every master within -timeout and builds the
// plan. On failure it has printed why and returns the exit code; otherwise the
// caller closes the prober.
func probePlan(ctx context.Context, env *Env, cmd *Command, cm *common) (*hcl.Config, *health.Prober, *health.Plan, int) {
	cfg, code := cm.load(env)
	if code != ExitOK {
		return nil, nil, nil, ExitError
	}
	quietRedis()
	p, err := health.NewProber(cfg.Cluster)
	if err != nil {
		fmt.Fprintf(env.Stderr, "redlock %s: %s\n", cmd.Name, escape.Text(cfg.Redact(err.Error())))
		return nil, nil, nil, ExitError
	}
	pctx, cancel := context.WithTimeout(ctx, cm.timeout)
	defer cancel()
	hs := p.Probe(pctx)
	return cfg, p, health.NewPlan(cfg.Cluster, hs, time.Now()), ExitOK
}

// writePlan writes the human plan: a header, per master its state, changes and
// findings (with their detail), and the summary line.
func writePlan(w io.Writer, c *topology.Cluster, plan *health.Plan) {
	fmt.Fprintf(w, "Cluster %q: %d masters, quorum %d.\n", c.Name, len(plan.Masters), plan.Quorum)
	for i := range plan.Masters {
		mp := &plan.Masters[i]
		h := &mp.Health
		fmt.Fprintf(w, "\nmaster %q (%s): %s", h.Master, h.Address, mp.State)
		switch {
		case !mp.Checked && len(c.Settings) > 0:
			fmt.Fprint(w, ", settings not checked\n")
		case len(mp.Changes) == 0:
			fmt.Fprint(w, ", no changes\n")
		default:
			fmt.Fprintln(w)
		}
		for _, ch := range mp.Changes {
			fmt.Fprintf(w, "  %s\n", ch)
		}
	}
	hs := make([]topology.NodeHealth, len(plan.Masters))
	for i := range plan.Masters {
		hs[i] = plan.Masters[i].Health
	}
	health.WriteFindings(w, hs, true)
	fmt.Fprintf(w, "\n%s\n", plan.Summary)
}
