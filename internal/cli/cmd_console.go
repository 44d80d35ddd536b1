package cli

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/term"

	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/quorum"
	"github.com/redlock/redlock/quorum/observe"
	"github.com/redlock/redlock/topology"
	"github.com/redlock/redlock/tui"
)

// consoleArgs are the arguments of console.
type consoleArgs struct {
	common
	readOnly bool
	interval time.Duration
}

func (a *consoleArgs) flags(f *Flags) {
	f.Bool(&a.readOnly, "read-only", "hide and refuse the writing keys (a, e, r, x)")
	f.Duration(&a.interval, "interval", time.Second, "refresh interval (default 1s)").atLeast(50 * time.Millisecond)
	a.metricsFlagOn(f)
	a.common.flags(f)
}

var _ = define(&Command{
	Name:     "console",
	Synopsis: "terminal console: live node health and locks; acquire, extend, release, force-expire",
	About: `
Opens the terminal console on the cluster of the topology file: a nodes panel, the
live locks with validity countdowns, and the selected lock on every master.
Keys: j/k or arrows move, tab switches panel, / filters, a acquires, e extends and r
releases a lock this console holds, x revokes any lock (force-expire: its holder
is told to stop, the name stays taken until its validity ends; after y/n), D
deletes one at once (after a y/n that says the old holder may still act), ? shows
every key, q quits (releasing the locks this console holds). -timeout bounds each
action of the console, not the session.`,
	Exits: []Exit{
		{0, "the console was quit (q)"},
		{1, "error (no terminal, a lock the console held could not be released)"},
		exitBadInput,
	},
}, runConsoleCmd)

func runConsoleCmd(ctx context.Context, env *Env, a *consoleArgs) error {
	cfg, err := a.load(env)
	if err != nil {
		return err
	}
	obs, stop, err := a.metrics.start(env, cfg.Cluster)
	if err != nil {
		return fail(ExitError, err)
	}
	defer stop()
	return exitStatus(runConsole(ctx, env, cfg.Cluster, consoleSettings{
		readOnly: a.readOnly, interval: a.interval, actionTimeout: a.timeout, redact: cfg.Redact, observer: obs,
	}))
}

// consoleSettings are what `console` and `demo` pass to runConsole.
type consoleSettings struct {
	readOnly      bool
	interval      time.Duration
	actionTimeout time.Duration
	embedded      bool
	note          string
	redact        func(string) string
	observer      observe.Observer // -metrics-addr: the console's lock metrics
}

// runConsole opens the console on cluster c until the user quits or ctx ends, then
// releases whatever the console still holds.
func runConsole(ctx context.Context, env *Env, c *topology.Cluster, s consoleSettings) int {
	in, out, err := terminal(env)
	if err != nil {
		fmt.Fprintf(env.Stderr, "redlock console: %v\n", err)
		return ExitError
	}
	// The driver logs dial failures to stderr, which would scribble over the screen;
	// the console shows them per master instead.
	quietRedis()
	opts := []quorum.Option{quorum.WithOwner("console")}
	if s.observer != nil {
		opts = append(opts, quorum.WithObserver(s.observer))
	}
	src, mgr, cleanup, err := newClusterSource(c, sourceSettings{embedded: s.embedded, redact: s.redact, interval: s.interval}, opts...)
	if err != nil {
		fmt.Fprintf(env.Stderr, "redlock console: %s\n", escape.Text(redactWith(s.redact, err.Error())))
		return ExitError
	}
	defer cleanup()
	var lk tui.Locker
	if !s.readOnly {
		lk = managerLocker{mgr}
	}
	note := s.note
	if note == "" && !c.RestartQuarantine {
		note = "restart quarantine off"
	}
	names := make([]string, len(c.Masters))
	for i := range c.Masters {
		names[i] = c.Masters[i].Name
	}
	m := tui.New(src, lk, tui.Options{
		Cluster: c.Name, Masters: names, Quorum: c.Quorum(), DefaultTTL: c.TTL, MaxTTL: c.MaxTTL,
		Interval: s.interval, ActionTimeout: s.actionTimeout, ReadOnly: s.readOnly, Note: note,
		Copy: osc52(out),
	})
	p := tea.NewProgram(m, tea.WithAltScreen(), tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out))
	final, runErr := p.Run()
	// Whatever the console still holds (a failed release, or an interrupted run) is
	// released now, under a fresh deadline.
	code := ExitOK
	if fm, ok := final.(*tui.Model); ok {
		rctx, cancel := context.WithTimeout(context.Background(), max(s.actionTimeout, 2*time.Second))
		for _, h := range fm.Holding() {
			if err := h.Release(rctx); err != nil {
				fmt.Fprintf(env.Stderr, "redlock console: release %s: %s\n", h.Name(), escape.Text(redactWith(s.redact, err.Error())))
				code = ExitError
			}
		}
		cancel()
	}
	if runErr != nil && !errors.Is(runErr, tea.ErrProgramKilled) && !errors.Is(runErr, context.Canceled) {
		fmt.Fprintf(env.Stderr, "redlock console: %v\n", runErr)
		return ExitError
	}
	return code
}

func redactWith(redact func(string) string, s string) string {
	if redact == nil {
		return s
	}
	return redact(s)
}

// terminal returns the console's input and output: they must be a terminal.
func terminal(env *Env) (*os.File, *os.File, error) {
	in, ok1 := env.Stdin.(*os.File)
	out, ok2 := env.Stdout.(*os.File)
	if !ok1 || !ok2 || !term.IsTerminal(in.Fd()) || !term.IsTerminal(out.Fd()) {
		return nil, nil, errors.New("the console needs a terminal on stdin and stdout (use `locks`, `nodes` or `watch -json` in scripts)")
	}
	return in, out, nil
}

// osc52 returns a function that puts text on the terminal's clipboard with the
// OSC 52 escape sequence, which terminals (and tmux with set-clipboard on) honour
// even over SSH.
func osc52(out io.Writer) func(string) error {
	return func(text string) error {
		_, err := fmt.Fprintf(out, "\x1b]52;c;%s\x07", base64.StdEncoding.EncodeToString([]byte(text)))
		return err
	}
}
