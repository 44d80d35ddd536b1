package cli

import (
	"context"
	"fmt"

	hclv2 "github.com/hashicorp/hcl/v2"

	"github.com/redlock/redlock/hcl"

	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/internal/human"
)

// validateArgs are the arguments of validate.
type validateArgs struct{ common }

func (a *validateArgs) flags(f *Flags) {
	f.Bool(&a.json, "json", `print one JSON document on stdout (shaped like
"terraform validate -json") instead of text`)
	a.common.flags(f)
}

func (a *validateArgs) parse(p *parsed) error {
	if err := p.noArgs(" (give the file with -config)"); err != nil {
		return err
	}
	return a.check()
}

var _ = define(&Command{
	Name:     "validate",
	Synopsis: "check the topology file offline",
	About: `
Parses the topology file and checks it without contacting any master: the
schema, variables, durations, timing rules (ttl, max_ttl, node_timeout, drift
budget), masters and lock policies. Errors and warnings are printed to stderr
as file:line:col with the offending source line.`,
	Exits: []Exit{
		{0, "valid (warnings allowed)"},
		{2, "invalid or unreadable file, or bad command line"},
	},
}, runValidate)

// validateView is the output of validate: the report (shaped like terraform
// validate -json), or the diagnostics on stderr and one line.
type validateView struct {
	*hcl.Report
	cfg    *hcl.Config
	diags  hclv2.Diagnostics
	source string
}

func (v validateView) human(env *Env) error {
	if len(v.diags) > 0 {
		_ = v.cfg.WriteDiagnostics(env.Stderr, v.diags, colorFor(env.Stderr, env.Getenv))
	}
	if !v.Valid || v.cfg.Cluster == nil {
		return nil // the printer says it is invalid
	}
	cl := v.cfg.Cluster
	line := fmt.Sprintf("%s is valid: cluster %q, %d masters, quorum %d, ttl %s, max_ttl %s", escape.Text(v.source), cl.Name, len(cl.Masters), cl.Quorum(), human.Duration(cl.TTL), human.Duration(cl.MaxTTL))
	if v.WarningCount > 0 {
		line += fmt.Sprintf(", %d warning(s)", v.WarningCount)
	}
	_, err := fmt.Fprintln(env.Stdout, line+".")
	return err
}

func runValidate(_ context.Context, env *Env, a *validateArgs) error {
	cfg, diags := a.loadOffline(env)
	rep := cfg.Report(diags)
	if err := show(env, a.json, validateView{Report: rep, cfg: cfg, diags: diags, source: a.source()}); err != nil {
		return fail(ExitError, err)
	}
	if !rep.Valid || cfg.Cluster == nil {
		// Under -json the document says it all, as terraform validate -json.
		return &exitError{code: ExitInvalid, err: fmt.Errorf("%s is invalid: %d error(s), %d warning(s)", a.source(), rep.ErrorCount, rep.WarningCount),
			doc: skipDoc{}, shown: a.json}
	}
	return nil
}
