package cli

import (
	"context"
	"fmt"
	"github.com/redlock/redlock/internal/escape"
)

func init() {
	cmd := &Command{
		Name:     "validate",
		Synopsis: "check the topology file offline",
		Usage: `Usage: redlock validate [-json] [-config PATH] [-var NAME=VALUE]...

Parses the topology file and checks it without contacting any master: the
schema, variables, durations, timing rules (ttl, max_ttl, node_timeout, drift
budget), masters and lock policies. Errors and warnings are printed to stderr
as file:line:col with the offending source line.

Flags:
  -json             print one JSON document on stdout (shaped like
                    "terraform validate -json") instead of text
` + commonUsage + `

Exit codes:
  0  valid (warnings allowed)
  2  invalid or unreadable file, or bad command line`,
	}
	cmd.Run = func(ctx context.Context, env *Env, args []string) int { return runValidate(env, cmd, args) }
	register(cmd)
}

func runValidate(env *Env, cmd *Command, args []string) int {
	fs := newFlagSet(cmd)
	var c common
	c.register(fs, env)
	asJSON := c.jsonFlag(fs, "JSON output")
	if code, ok := parseFlags(env, cmd, fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageErrorf(env, cmd, "unexpected argument %q (give the file with -config)", fs.Arg(0))
	}
	if msg := c.check(); msg != "" {
		return usageErrorf(env, cmd, "%s", msg)
	}
	if *asJSON {
		cfg, diags := c.loadOffline(env)
		rep := cfg.Report(diags)
		if err := writeDoc(env.Stdout, rep); err != nil {
			fmt.Fprintf(env.Stderr, "redlock validate: %v\n", err)
			return ExitError
		}
		if !rep.Valid {
			return ExitInvalid
		}
		return ExitOK
	}
	cfg, diags := c.loadOffline(env)
	if len(diags) > 0 {
		_ = cfg.WriteDiagnostics(env.Stderr, diags, colorFor(env.Stderr, env.Getenv))
	}
	warnings := len(diags) - len(diags.Errs())
	if diags.HasErrors() || cfg.Cluster == nil {
		fmt.Fprintf(env.Stderr, "%s is invalid: %d error(s), %d warning(s).\n", escape.Text(c.source()), len(diags.Errs()), warnings)
		return ExitInvalid
	}
	cl := cfg.Cluster
	fmt.Fprintf(env.Stdout, "%s is valid: cluster %q, %d masters, quorum %d, ttl %v, max_ttl %v", escape.Text(c.source()), cl.Name, len(cl.Masters), cl.Quorum(), cl.TTL, cl.MaxTTL)
	if warnings > 0 {
		fmt.Fprintf(env.Stdout, ", %d warning(s)", warnings)
	}
	fmt.Fprintln(env.Stdout, ".")
	return ExitOK
}
