package cli

import (
	"context"
	"fmt"

	"github.com/redlock/redlock/internal/escape"
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

func runValidate(_ context.Context, env *Env, a *validateArgs) error {
	cfg, diags := a.loadOffline(env)
	if a.json {
		rep := cfg.Report(diags)
		if err := writeDoc(env.Stdout, rep); err != nil {
			return fail(ExitError, err)
		}
		if !rep.Valid {
			return &exitError{code: ExitInvalid, err: fmt.Errorf("%s is invalid", a.source()), shown: true, doc: skipDoc{}}
		}
		return nil
	}
	if len(diags) > 0 {
		_ = cfg.WriteDiagnostics(env.Stderr, diags, colorFor(env.Stderr, env.Getenv))
	}
	warnings := len(diags) - len(diags.Errs())
	if diags.HasErrors() || cfg.Cluster == nil {
		return failf(ExitInvalid, "%s is invalid: %d error(s), %d warning(s).", a.source(), len(diags.Errs()), warnings)
	}
	cl := cfg.Cluster
	fmt.Fprintf(env.Stdout, "%s is valid: cluster %q, %d masters, quorum %d, ttl %v, max_ttl %v", escape.Text(a.source()), cl.Name, len(cl.Masters), cl.Quorum(), cl.TTL, cl.MaxTTL)
	if warnings > 0 {
		fmt.Fprintf(env.Stdout, ", %d warning(s)", warnings)
	}
	fmt.Fprintln(env.Stdout, ".")
	return nil
}
