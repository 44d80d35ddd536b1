package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/internal/guard"
	"github.com/redlock/redlock/internal/human"
	"github.com/redlock/redlock/quorum"
)

// ExitCapped: run's keep-alive stopped at -max-hold or the policy's
// max_extensions, and the command was stopped before the validity ended.
const ExitCapped = 5

// deadlines are run's signal timings relative to the lock's validity deadline.
type deadlines struct {
	margin  time.Duration // SIGTERM this long before the deadline
	lead    time.Duration // SIGKILL this long before the deadline at the latest
	grace   time.Duration // SIGKILL this long after SIGTERM at most (clipped)
	clipped bool          // grace was clipped to fit before the deadline
	hard    time.Time     // -max-hold's end of the lock, whatever run learns; zero when none
}

// holdEnd is the earliest moment at which another client can take a lock
// acquired in a round that started at acquired once a keep-alive capped at
// maxHold made its final, shortened extension: that extension asks for what is
// left of maxHold, truncated to the millisecond, and the masters' clocks may run
// fast by the drift budget. The guard is given it at start, so that the child is
// stopped in time even when run is frozen or killed between the keep-alive's
// final round and telling the guard the shortened deadline.
func holdEnd(acquired time.Time, maxHold, drift time.Duration) time.Time {
	return acquired.Add(maxHold - time.Millisecond - drift)
}

// until is the deadline in force: the lock's, capped by -max-hold's end.
func (d deadlines) until(lockUntil time.Time) time.Time {
	if !d.hard.IsZero() && lockUntil.After(d.hard) {
		return d.hard
	}
	return lockUntil
}

// runDeadlines checks and completes -margin and -grace for a lock of ttl.
func runDeadlines(ttl, margin, grace time.Duration, marginGiven bool) (deadlines, error) {
	if !marginGiven {
		margin = max(ttl/5, 10*time.Millisecond)
		if margin >= ttl/2 {
			margin = ttl / 5
		}
	}
	// The keep-alive extends the lock when half the TTL is left: a SIGTERM due
	// earlier than that would stop every command at its first extension.
	if margin >= ttl/2 {
		return deadlines{}, fmt.Errorf("-margin %s must be shorter than half the lock's ttl %s (the keep-alive extends the lock when half of it is left)", human.Duration(margin), human.Duration(ttl))
	}
	d := deadlines{margin: margin, lead: min(guard.DefaultKillLead, margin/2), grace: grace}
	if fit := margin - d.lead; d.grace > fit {
		d.grace, d.clipped = fit, true
	}
	return d, nil
}

// superviseRun runs argv under the guard while l is held, and returns the exit
// code of prog (run, elect). extra is added to the command's environment. sigs
// are the signals prog receives, forwarded to the command.
func superviseRun(env *Env, prog string, l *quorum.Lock, a *guardArgs, extra []string, dl deadlines, sigs <-chan os.Signal) int {
	argv, maxHold := a.argv, a.maxHold
	childEnv := append(os.Environ(),
		"REDLOCK_NAME="+l.Name(),
		"REDLOCK_TOKEN="+l.Token(),
		"REDLOCK_VALID_UNTIL="+dl.until(l.Until()).Format(time.RFC3339Nano),
	)
	if f := l.Fence(); f > 0 {
		childEnv = append(childEnv, "REDLOCK_FENCE="+strconv.FormatInt(f, 10))
	}
	childEnv = append(childEnv, extra...)
	tty := -1 // stdin, when it is a terminal
	if f, ok := env.Stdin.(*os.File); ok && guard.IsTerminal(int(f.Fd())) {
		tty = int(f.Fd())
	}
	g, err := guard.Start(guard.Config{
		Argv: argv, Env: childEnv, Stdin: env.Stdin, Stdout: env.Stdout, Stderr: env.Stderr,
		Until: l.Until(), HardUntil: dl.hard, Margin: dl.margin, Grace: dl.grace, KillLead: dl.lead,
		Foreground: tty >= 0 && guard.InForeground(tty),
	})
	if err != nil {
		if errors.Is(err, guard.ErrExpired) {
			fmt.Fprintf(env.Stderr, "redlock %s: lock lost: the validity of %s (less -margin %s) ended before the command could start (%s was delayed): the command was not started\n",
				prog, escape.Text(l.Name()), human.Duration(dl.margin), prog)
			return ExitLost
		}
		fmt.Fprintf(env.Stderr, "redlock %s: start %s: %s\n", prog, escape.Text(argv[0]), escape.Text(err.Error()))
		if errors.Is(err, exec.ErrNotFound) {
			return 127
		}
		return 126
	}
	defer g.Close()
	if a.orphan != nil {
		args, oenv := a.orphan()
		_ = g.OnOrphan(args, oenv) // without it, the lock ends with its validity
	}
	if tty >= 0 {
		// Take the terminal back only from the command: after Ctrl-Z and bg, run
		// ends in the background and the terminal is the shell's.
		defer func() {
			if guard.ForegroundIs(tty, g.Pid()) {
				guard.TakeTerminal(tty)
			}
		}()
	}
	r := &runner{env: env, prog: "redlock " + prog + ":", l: l, g: g, dl: dl, maxHold: maxHold}
	return r.loop(sigs, tty)
}

// runner follows the lock and the command until the command exits.
type runner struct {
	env     *Env
	prog    string // "redlock run:", the prefix of its messages
	l       *quorum.Lock
	g       *guard.Guard
	dl      deadlines
	maxHold time.Duration
	lost    error // why the command was told to stop; nil while the lock holds
	capped  bool  // the cap message was printed
}

func (r *runner) loop(sigs <-chan os.Signal, tty int) int {
	cont := make(chan os.Signal, 1)
	notifyContinued(cont)
	defer signal.Stop(cont)
	changed := r.l.UntilChanged()
	done := r.l.Done()
	// run's own timers mirror the guard's: the message at SIGTERM time, and a
	// SIGKILL of its own as a backstop should the guard be frozen.
	term := time.NewTimer(time.Until(r.dl.until(r.l.Until()).Add(-r.dl.margin)))
	kill := time.NewTimer(time.Until(r.dl.until(r.l.Until()).Add(-r.dl.lead)))
	defer term.Stop()
	defer kill.Stop()
	for {
		select {
		case <-changed:
			changed = r.l.UntilChanged()
			_ = r.g.SetUntil(r.l.Until())
			until := r.dl.until(r.l.Until())
			if r.lost == nil {
				term.Reset(time.Until(until.Add(-r.dl.margin)))
			}
			kill.Reset(time.Until(until.Add(-r.dl.lead)))
			if cause := r.l.Capped(); cause != nil && !r.capped {
				r.capped = true
				fmt.Fprintf(r.env.Stderr, "%s %s: the lock ends at %s; the command gets SIGTERM at %s\n", r.prog,
					r.capWhy(cause), until.Format(time.RFC3339Nano), until.Add(-r.dl.margin).Format(time.RFC3339Nano))
			}
		case <-done:
			done = nil
			r.stop(r.l.Err())
		case <-term.C:
			r.stop(r.endCause("ends at " + r.dl.until(r.l.Until()).Format(time.RFC3339Nano) + " without an extension"))
		case <-kill.C:
			fmt.Fprintf(r.env.Stderr, "%s the validity of %s is ending: SIGKILL to the command\n", r.prog, escape.Text(r.l.Name()))
			r.g.Kill()
		case sig := <-sigs:
			_ = r.g.Signal(sig.(syscall.Signal))
		case <-r.g.Stopped():
			if tty < 0 {
				// No terminal, no job control (cron, CI): stopping run would stop
				// the process group of the script that called it. The command stays
				// stopped under the lock until whoever stopped it continues it; the
				// deadlines apply as always (SIGTERM comes with SIGCONT).
				continue
			}
			// Ctrl-Z stopped the command: give the shell its job back by stopping
			// run too. Nothing extends the lock while run is stopped; once the shell
			// continues run in the foreground (fg), the command gets the terminal
			// back; continued in the background (bg), the terminal stays the shell's.
			if guard.ForegroundIs(tty, r.g.Pid()) {
				guard.TakeTerminal(tty)
			}
			for len(cont) > 0 {
				<-cont
			}
			stopOwnGroup()
			// The stop takes effect asynchronously: wait until continued.
			select {
			case <-cont:
			case ex := <-r.g.Done():
				return r.exit(ex)
			}
			if guard.InForeground(tty) {
				guard.GiveTerminal(tty, r.g.Pid())
			}
			_ = r.g.Signal(sigCont)
		case ex := <-r.g.Done():
			return r.exit(ex)
		}
	}
}

// stop tells the guard to stop the command (SIGTERM now, SIGKILL after the grace)
// because of why, once.
func (r *runner) stop(why error) {
	if r.lost != nil {
		return
	}
	r.lost = why
	msg := escape.Text(why.Error()) // "lock lost: ..." (quorum.ErrLost)
	if errors.Is(why, quorum.ErrExtensionCap) {
		msg = r.capWhy(why)
	}
	fmt.Fprintf(r.env.Stderr, "%s %s: SIGTERM to the command, SIGKILL in %s at most\n", r.prog, msg, human.Duration(r.dl.grace))
	_ = r.g.Terminate()
}

// endCause says why the deadline in force ends the run, once no extension moved
// it: a keep-alive cap (also when -max-hold's end, known from the start, comes
// before the keep-alive reported its final extension), else the validity ending.
func (r *runner) endCause(what string) error {
	if cause := r.l.Capped(); cause != nil {
		return cause
	}
	if !r.dl.hard.IsZero() && !r.l.Until().Before(r.dl.hard) {
		return fmt.Errorf("%w: %w (maximum hold %s) for %s", quorum.ErrLost, quorum.ErrExtensionCap, human.Duration(r.maxHold), r.l.Name())
	}
	return fmt.Errorf("%w: the validity of %s %s", quorum.ErrLost, r.l.Name(), what)
}

// capWhy says which cap ended the run.
func (r *runner) capWhy(cause error) string {
	if r.maxHold > 0 {
		return "-max-hold " + human.Duration(r.maxHold) + " reached"
	}
	return "the lock policy's max_extensions reached (" + escape.Text(cause.Error()) + ")"
}

// exit maps how the command ended to run's exit code.
func (r *runner) exit(ex guard.Exit) int {
	if ex.Stopped && r.lost == nil {
		// The guard's own deadline came before run's timer: the same end.
		cause := r.endCause("ended without an extension")
		r.lost = cause
		fmt.Fprintf(r.env.Stderr, "%s the guard stopped the command: %s\n", r.prog, escape.Text(cause.Error()))
	}
	switch {
	case ex.Err != nil:
		// The guard died: whatever is left of the command's group goes with it.
		r.g.Kill()
		fmt.Fprintf(r.env.Stderr, "%s %s; the command's process group was killed\n", r.prog, escape.Text(ex.Err.Error()))
		return ExitError
	case r.lost != nil && errors.Is(r.lost, quorum.ErrExtensionCap):
		return ExitCapped
	case r.lost != nil:
		return ExitLost
	case ex.Signal != 0:
		return 128 + int(ex.Signal)
	}
	return ex.Code
}
