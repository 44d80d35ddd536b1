package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/redlock/redlock/internal/health"
)

// applyArgs are the arguments of apply.
type applyArgs struct {
	common
	auto bool
}

func (a *applyArgs) flags(f *Flags) {
	f.Bool(&a.auto, "auto-approve", "do not ask; apply at once")
	a.common.flags(f)
}

var _ = define(&Command{
	Name:     "apply",
	Synopsis: "CONFIG SET the settings drift shown by plan, after a yes prompt",
	About: `
Shows the plan, asks for "yes" on stdin (anything else aborts), then runs CONFIG
SET for every declared setting that differs on each master and CONFIG REWRITE so
the change survives a restart. Reports per master what changed, what failed and
which masters were not checked (down, credentials refused, CONFIG GET refused);
when anything failed or was skipped it ends with an error summary naming each
failure (never "Apply complete"). validate refuses a file whose settings break
lock safety (an allkeys-* or volatile-* maxmemory_policy): apply never sets them.`,
	ExitNote: "As Terraform's, a usage error exits 1.",
	Exits: []Exit{
		{0, "every master checked and every change applied"},
		{1, "aborted, a change failed, a master could not be checked, the file is invalid, or a usage error"},
	},
	UsageExit: ExitError,
}, runApply)

func runApply(ctx context.Context, env *Env, a *applyArgs) error {
	cfg, p, plan, err := probePlan(ctx, env, &a.common)
	if err != nil {
		return err
	}
	defer p.Close()
	say := func(format string, a ...any) {
		_, _ = io.WriteString(env.Stdout, escapeLines(cfg.Redact(fmt.Sprintf(format, a...))))
	}

	_, _ = io.WriteString(env.Stdout, planText(cfg.Cluster, plan, cfg.Redact))

	if plan.Summary.Changes == 0 {
		say("\nNo changes to apply.\n")
		if plan.Summary.Unchecked > 0 {
			for _, mp := range plan.Masters {
				if !mp.Checked {
					say("master %q: not checked; its settings may still differ.\n", mp.Health.Master)
				}
			}
			return failf(ExitError, "%s not checked", pluralize(plan.Summary.Unchecked, "master"))
		}
		return nil
	}

	if !a.auto {
		say("\nDo you want to perform these actions?\n  Only 'yes' will be accepted to approve.\n\n  Enter a value: ")
		var line string
		err := io.EOF
		if env.Stdin != nil {
			line, err = interruptible(ctx, func() (string, error) { return bufio.NewReader(env.Stdin).ReadString('\n') })
		}
		if strings.TrimSpace(line) != "yes" {
			say("\n")
			if err != nil && err != io.EOF {
				return failf(ExitError, "reading the answer: %v; apply cancelled: nothing was changed", err)
			}
			return failf(ExitError, "Apply cancelled: nothing was changed.")
		}
	}

	actx, cancel := context.WithTimeout(ctx, a.timeout)
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
		return failf(ExitError, "%s failed, %s skipped: the masters do not match the file", pluralize(failed, "setting"), pluralize(skipped, "master"))
	}
	say("\nApply complete: %s changed on %s.\n", pluralize(changed, "setting"), pluralize(masters, "master"))
	return nil
}

func pluralize(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
