package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/internal/local"
)

// upArgs are the arguments of up.
type upArgs struct {
	common
	embedded, restart bool
}

func (a *upArgs) flags(f *Flags) {
	f.Bool(&a.embedded, "embedded", "use in-process embedded servers even when redis-server is installed")
	f.Bool(&a.restart, "restart", "start a master again when its process ends")
	a.metricsFlagOn(f)
	a.common.flags(f)
}

var _ = define(&Command{
	Name:     "up",
	Synopsis: "start local masters for a topology whose addresses are loopback, until Ctrl-C",
	About: `
Starts one throwaway master per master block of the topology file, on its declared
loopback address: redis-server processes when redis-server is installed, else
in-process embedded servers. They keep no data (no RDB, no AOF). Prints each
master's address, then runs in the foreground until Ctrl-C, and stops them.
Refuses any address that is not loopback, and fails at once, naming it, when a
port is already taken (another up, another redis-server). It supervises the
masters: one that exits or is killed is reported with the end of its log, and
started again only with -restart (it comes back empty: with restart_quarantine
on, it does not vote until the window has passed).`,
	Exits: []Exit{
		{0, "stopped by Ctrl-C"},
		{1, "error (non-loopback address, port in use, or a master ended and was not restarted)"},
		exitBadInput,
	},
}, runUp)

func runUp(ctx context.Context, env *Env, a *upArgs) error {
	cfg, err := a.load(env)
	if err != nil {
		return err
	}
	c := cfg.Cluster
	_, stopMetrics, err := a.metrics.start(env, c)
	if err != nil {
		return fail(ExitError, err)
	}
	defer stopMetrics()
	specs := make([]local.Spec, len(c.Masters))
	for i, m := range c.Masters {
		if m.TLS != nil {
			return failf(ExitError, "master %s declares tls: local masters are plain TCP", m.Name)
		}
		if m.Password != "" || m.Username != "" {
			return failf(ExitError, "master %s declares credentials: local masters have no ACL users", m.Name)
		}
		specs[i] = local.Spec{Name: m.Name, Addr: m.Address}
	}
	set, err := local.Start(ctx, specs, local.Options{Embedded: a.embedded})
	if err != nil {
		return fail(ExitError, redacted(err, cfg.Redact))
	}
	defer set.Close()
	for _, m := range set.Masters {
		if m.PID > 0 {
			fmt.Fprintf(env.Stdout, "master %s %s (redis-server, pid %d)\n", m.Name, m.Addr, m.PID)
		} else {
			fmt.Fprintf(env.Stdout, "master %s %s (embedded)\n", m.Name, m.Addr)
		}
	}
	if c.RestartQuarantine {
		fmt.Fprintf(env.Stderr, "redlock up: note: restart_quarantine is on, so these brand-new masters do not vote for %s; set restart_quarantine = false for throwaway local masters\n",
			c.QuarantineWindow())
	}
	fmt.Fprintf(env.Stderr, "redlock up: %d masters of cluster %s running; Ctrl-C stops them\n", len(set.Masters), c.Name)
	if superviseUp(ctx, env, set, a.restart, c.QuarantineWindow()) != ExitOK {
		return &exitError{code: ExitError, err: errors.New("a master ended"), shown: true}
	}
	return nil
}

// superviseUp waits for Ctrl-C, reporting every master that ends meanwhile and
// starting it again when restart is set.
func superviseUp(ctx context.Context, env *Env, set *local.Set, restart bool, window time.Duration) int {
	ended := make(chan int, len(set.Masters))
	watch := func(i int) {
		m := set.Masters[i]
		if m.Exited() == nil {
			return
		}
		go func() {
			select {
			case <-m.Exited():
				ended <- i
			case <-ctx.Done():
			}
		}()
	}
	for i := range set.Masters {
		watch(i)
	}
	code := ExitOK
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintln(env.Stderr, "redlock up: stopping")
			return code
		case i := <-ended:
			m := set.Masters[i]
			fmt.Fprintf(env.Stderr, "redlock up: master %s (%s, pid %d) exited: %s\n", escape.Text(m.Name), m.Addr, m.PID, escape.Text(m.LogTail()))
			if !restart {
				fmt.Fprintf(env.Stderr, "redlock up: master %s is down; run with -restart to start it again\n", escape.Text(m.Name))
				code = ExitError
				continue
			}
			if err := set.Restart(ctx, i); err != nil {
				fmt.Fprintf(env.Stderr, "redlock up: restart: %s\n", escape.Text(err.Error()))
				code = ExitError
				continue
			}
			m = set.Masters[i]
			fmt.Fprintf(env.Stdout, "master %s %s (redis-server, pid %d) restarted\n", m.Name, m.Addr, m.PID)
			if window > 0 {
				fmt.Fprintf(env.Stderr, "redlock up: note: master %s restarted empty: with restart_quarantine on, clients do not count its vote for %v\n", escape.Text(m.Name), window)
			}
			watch(i)
		}
	}
}
