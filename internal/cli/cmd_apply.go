package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/redlock/redlock/internal/health"
)

func init() {
	applyCmd.Run = runApply
	register(applyCmd)
}

var applyCmd = &Command{
	Name:     "apply",
	Synopsis: "CONFIG SET the settings drift shown by plan, after a yes prompt",
	Usage: `Usage: redlock apply [-auto-approve] [-config PATH] [-var NAME=VALUE] [-timeout D]

Shows the plan, asks for "yes" on stdin (anything else aborts), then runs CONFIG
SET for every declared setting that differs on each master and CONFIG REWRITE so
the change survives a restart. Reports per master what changed, what failed and
which masters were not checked (down, credentials refused, CONFIG GET refused);
when anything failed or was skipped it ends with an error summary naming each
failure (never "Apply complete"). validate refuses a file whose settings break
lock safety (an allkeys-* or volatile-* maxmemory_policy): apply never sets them.

Flags:
  -auto-approve     do not ask; apply at once
` + commonUsage + `

Exit codes (as Terraform's): 0 every master checked and every change applied,
1 aborted, a change failed, a master could not be checked, the file is invalid, or
a usage error.`,
}

func runApply(ctx context.Context, env *Env, args []string) int {
	var cm common
	fs := newFlagSet(applyCmd)
	cm.register(fs, env)
	auto := fs.Bool("auto-approve", false, "do not ask; apply at once")
	if code, ok := parseNoArgs(env, applyCmd, fs, &cm, args); !ok {
		return terraformUsage(code)
	}
	cfg, p, plan, code := probePlan(ctx, env, applyCmd, &cm)
	if code != ExitOK {
		return code
	}
	defer p.Close()
	say := func(format string, a ...any) {
		_, _ = io.WriteString(env.Stdout, escapeLines(cfg.Redact(fmt.Sprintf(format, a...))))
	}

	var sb strings.Builder
	writePlan(&sb, cfg.Cluster, plan)
	say("%s", sb.String())

	if plan.Summary.Changes == 0 {
		say("\nNo changes to apply.\n")
		if plan.Summary.Unchecked > 0 {
			for _, mp := range plan.Masters {
				if !mp.Checked {
					say("master %q: not checked; its settings may still differ.\n", mp.Health.Master)
				}
			}
			return ExitError
		}
		return ExitOK
	}

	if !*auto {
		say("\nDo you want to perform these actions?\n  Only 'yes' will be accepted to approve.\n\n  Enter a value: ")
		var line string
		err := io.EOF
		if env.Stdin != nil {
			line, err = interruptible(ctx, func() (string, error) { return bufio.NewReader(env.Stdin).ReadString('\n') })
		}
		if strings.TrimSpace(line) != "yes" {
			say("\n")
			if err != nil && err != io.EOF {
				fmt.Fprintf(env.Stderr, "redlock apply: reading the answer: %v\n", err)
			}
			fmt.Fprintln(env.Stderr, "Apply cancelled: nothing was changed.")
			return ExitError
		}
	}

	actx, cancel := context.WithTimeout(ctx, cm.timeout)
	defer cancel()
	outcomes := p.Apply(actx, plan)

	say("\n")
	changed, failed, skipped, masters := 0, 0, 0, 0
	for _, o := range outcomes {
		if len(o.Applied) > 0 {
			masters++
		}
		for _, ch := range o.Applied {
			changed++
			say("master %q: changed %s\n", o.Master, strings.TrimPrefix(ch.String(), "~ "))
		}
		for _, f := range o.Failed {
			failed++
			say("master %q: FAILED %s: %s\n", o.Master, f.Setting, f.Error)
		}
		if o.Skipped != "" {
			skipped++
			say("master %q: skipped: %s\n", o.Master, o.Skipped)
		}
		if len(o.Applied) > 0 && !o.Persisted {
			say("master %q: not saved to its config file (CONFIG REWRITE: %s): the change lasts until the master restarts\n", o.Master, o.PersistError)
		}
	}
	if failed > 0 || skipped > 0 {
		say("\n%s", health.FailureSummary(outcomes))
		fmt.Fprintf(env.Stderr, "redlock apply: %s failed, %s skipped: the masters do not match the file\n", pluralize(failed, "setting"), pluralize(skipped, "master"))
		return ExitError
	}
	say("\nApply complete: %s changed on %s.\n", pluralize(changed, "setting"), pluralize(masters, "master"))
	return ExitOK
}

func pluralize(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
