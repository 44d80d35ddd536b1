package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/redlock/redlock/hcl"
	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/internal/health"
	"github.com/redlock/redlock/topology"
)

// planArgs are the arguments of plan.
type planArgs struct {
	common
	detailed bool
}

func (a *planArgs) flags(f *Flags) {
	a.jsonFlag(f)
	f.Bool(&a.detailed, "detailed-exitcode", "exit 2 when changes are pending")
	a.common.flags(f)
}

var _ = define(&Command{
	Name:     "plan",
	Synopsis: "check every live master against the file and show the settings apply would change",
	About: `
Probes every master: reachable, credentials, role:master, standalone mode,
version, settings drift, eviction and persistence risk, uptime against the
restart quarantine, clock offset against the drift budget. Prints each master's
findings and the settings changes apply would make, then a summary line. Live
values are compared as Redis means them (sizes by bytes, yes/no, case, and
notify-keyspace-events as a set of flags), so a plan right after apply is empty.`,
	ExitNote: "As Terraform's, a usage error exits 1: 2 means changes pending to a CI gate.",
	Exits: []Exit{
		{0, "no changes, or changes without -detailed-exitcode"},
		{1, `error: a usage error, an invalid file, or a finding apply cannot fix (a master
unreachable, credentials refused, a replica, failing persistence, a risky
setting that the file does not declare), or a master whose settings could not
be read (CONFIG GET refused: see docs/acl.md)`},
		{2, `with -detailed-exitcode: changes pending that apply will make, including the
error findings those changes fix (an eviction policy, persistence settings)`},
	},
	UsageExit: ExitError,
}, runPlan)

// planView is the output of plan.
type planView struct {
	planJSON
	cluster *topology.Cluster
	plan    *health.Plan
	redact  func(string) string
}

// human writes the plan, redacted, and escaped: server answers and errors are in
// there.
func (v planView) human(env *Env) error {
	_, err := io.WriteString(env.Stdout, planText(v.cluster, v.plan, v.redact))
	return err
}

func runPlan(ctx context.Context, env *Env, a *planArgs) error {
	cfg, p, plan, err := probePlan(ctx, env, &a.common)
	if err != nil {
		return err
	}
	defer p.Close()
	doc := planView{planJSON: toPlanJSON(plan, time.Now(), cfg.Redact), cluster: cfg.Cluster, plan: plan, redact: cfg.Redact}
	var out strings.Builder // the whole output is redacted, JSON too
	if err := show(&Env{Stdout: &out}, a.json, doc); err != nil {
		return fail(ExitError, err)
	}
	_, _ = io.WriteString(env.Stdout, cfg.Redact(out.String()))
	summary := func(code int) error {
		return &exitError{code: code, err: errors.New(plan.Summary.String()), shown: true, doc: skipDoc{}}
	}
	switch {
	case plan.Summary.Unfixable() > 0, plan.Summary.Unchecked > 0:
		// A master whose settings could not be read (CONFIG GET refused) is
		// no "no changes": plan cannot say, and apply cannot fix it.
		return summary(ExitError)
	case plan.Summary.Errors > 0 && !a.detailed:
		return summary(ExitError)
	case plan.Summary.Changes > 0 && a.detailed:
		return summary(ExitChanges)
	}
	return nil
}

// probePlan loads the file, probes every master within -timeout and builds the
// plan; the caller closes the prober. Every failure exits 1, as Terraform's.
func probePlan(ctx context.Context, env *Env, cm *common) (*hcl.Config, *health.Prober, *health.Plan, error) {
	cm.warnings = warnAlways // the check of the file says everything every time
	cfg, err := cm.load(env)
	if err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			ee.code = ExitError
		}
		return nil, nil, nil, err
	}
	quietRedis()
	p, err := health.NewProber(cfg.Cluster)
	if err != nil {
		return nil, nil, nil, fail(ExitError, redacted(err, cfg.Redact))
	}
	pctx, cancel := context.WithTimeout(ctx, cm.timeout)
	defer cancel()
	hs := p.Probe(pctx)
	return cfg, p, health.NewPlan(cfg.Cluster, hs, time.Now()), nil
}

// planText is the human plan: a header, per master its state, changes and
// findings (with their detail), and the summary line; redacted with redact and
// escaped once (server answers are in there).
func planText(c *topology.Cluster, plan *health.Plan, redact func(string) string) string {
	var head strings.Builder
	w := &head
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
	var out strings.Builder
	out.WriteString(escapeLines(redact(head.String())))
	health.WriteFindings(&out, hs, true, func(s string) string { return escape.Text(redact(s)) })
	fmt.Fprintf(&out, "\n%s\n", plan.Summary)
	return out.String()
}
