package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/quorum"
)

var runCmd = &Command{
	Name:     "run",
	Synopsis: "hold a lock while a command runs",
	Usage: `Usage: redlock run NAME [NAME...] [-permits N | -shared] [-ttl D] [-wait D] [-max-hold D] [-margin D] [-grace D] [-conflict-exit-code N] [-owner S] [-config PATH] [-var name=value] [-timeout D] -- CMD [ARGS...]

Takes the lock NAME (waiting up to -wait), runs CMD while a keep-alive extends the
lock in the background, releases the lock when CMD exits and exits with CMD's
status (128+N when CMD was killed by signal N).

The command never outlives the lock. CMD runs in a process group of its own under a
guard: a small supervisor process (this binary again) that learns every new
validity deadline from run and enforces it by itself, so it holds even when run is
killed (SIGKILL) or frozen (SIGSTOP, a debugger):
  - SIGTERM to CMD's whole process group at the deadline minus -margin when the
    lock was not extended, and at once when the lock is lost (a majority of
    masters no longer hold it: a force-expire is noticed within a round trip);
  - SIGKILL -grace after SIGTERM, and never later than 100ms before the deadline,
    whatever -grace says (a -grace that does not fit is clipped, with a message);
  - SIGKILL at once when run dies before CMD exits;
  - when CMD exits, whatever it left in its process group is killed too.
Not guaranteed: a process that leaves CMD's process group (setsid) escapes the
guard, and a machine that freezes as a whole freezes the guard too: use the
fencing token (REDLOCK_FENCE) where that matters.

When stdin is a terminal and run is in its foreground, CMD's process group gets the
terminal (interactive programs work as under flock) and run takes it back when CMD
exits. Ctrl-Z stops CMD and run; a stopped run does not extend the lock, so CMD is
killed when the validity ends; bg leaves the terminal to the shell. Without a
terminal, a CMD stopped by a signal stays stopped under the lock (still extended)
until continued, and run itself is not stopped.

CMD gets REDLOCK_NAME, REDLOCK_TOKEN, REDLOCK_VALID_UNTIL (RFC 3339, the validity
at start; the keep-alive moves it) and REDLOCK_FENCE when the lock policy uses
fencing; under several names REDLOCK_NAMES (space-separated), under -permits
REDLOCK_PERMIT (the slot held, from 0) and REDLOCK_PERMITS, under -shared
REDLOCK_SHARED=1.

` + primNote + `

SIGINT, SIGTERM and SIGHUP sent to run are forwarded to CMD's process group.

Flags:
  -ttl D       lock TTL (default: the lock policy's ttl, else the cluster's ttl)
  -wait D      keep trying to take the lock until D has passed (default 0: one round)
  -max-hold D  stop extending after D: CMD gets SIGTERM -margin before acquisition + D
               and run exits 5 (default: no cap)
  -margin D    SIGTERM this long before the validity ends (default ttl/5, at least
               10ms; shorter than ttl/2, when the keep-alive extends the lock)
  -grace D     time between SIGTERM and SIGKILL (default 5s, clipped to -margin - 100ms)
  -conflict-exit-code N
               exit N instead of 3 when the lock is not acquired (as flock -E);
               not one of run's own codes below
  -owner S     owner label written into the lock value
` + primUsage + `
  -metrics-addr ADDR
               serve this process's lock metrics (Prometheus) at http://ADDR/metrics
` + commonUsage + `
                    (run: bounds the acquisition after -wait; the command may run longer)

Exit codes (run's own codes are always explained by a "redlock run:" line on
stderr; pick a -conflict-exit-code that CMD never uses to tell "not acquired" apart):
  N    CMD's exit status (128+signal when it was killed by a signal)
  1    error (fewer than a quorum of masters reachable, interrupted before CMD started)
  2    usage error or invalid topology file
  3    not acquired: held by another owner (every permit taken; an exclusive
       holder against -shared), or -wait expired (or -conflict-exit-code N)
  4    the lock was lost while CMD ran (CMD was stopped), or run was delayed so long
       after acquiring that the validity ended before CMD could start (not started)
  5    -max-hold or the lock policy's max_extensions ended the run (CMD was stopped)
  126  CMD could not be started; 127 CMD was not found`,
}

func init() {
	runCmd.Run = runRun
	register(runCmd)
}

func runRun(ctx context.Context, env *Env, args []string) int {
	cmd := runCmd
	flags := newFlagSet(cmd)
	var cf common
	cf.register(flags, env)
	var gf guardFlags
	gf.register(flags)
	var pf primFlags
	pf.register(flags)
	cf.metricsFlagOn(flags)
	names, argv, code, ok := parseLockNames(env, cmd, flags, args, true)
	if !ok {
		return code
	}
	if code, ok := gf.check(env, cmd, flags, argv); !ok {
		return code
	}
	s, code := openSession(env, cmd, &cf)
	if s == nil {
		return code
	}
	defer s.close()
	k, code, ok := pf.kind(env, cmd, s, names)
	if !ok {
		return code
	}
	lockTTL, code := s.ttlForAll(env, cmd, names, gf.ttl, flagGiven(flags, "ttl"))
	if code != ExitOK {
		return code
	}
	dl, code, ok := gf.deadlines(env, cmd, s, lockTTL)
	if !ok {
		return code
	}
	opts := append(s.kindOptions(k, gf.owner), quorum.WithLossWatch(),
		quorum.WithKeepAlive(quorum.KeepAlive{MaxExtensions: s.maxExtensionsFor(names), MaxHold: gf.maxHold}))
	return holdAndRun(ctx, env, cmd, s, &gf, dl, k.what(), argv, func(ctx context.Context) (*quorum.Lock, []string, error) {
		tctx, cancel := context.WithTimeout(ctx, addSat(gf.wait, cf.timeout))
		defer cancel()
		l, err := acquireKind(tctx, s.m, k, lockTTL, gf.wait, opts...)
		if err != nil {
			return nil, nil, err
		}
		return l, kindEnv(l), nil
	})
}

// guardFlags are the flags of the commands that run CMD under the guard while
// they hold something (run, elect).
type guardFlags struct {
	ttl, wait, maxHold, margin, grace time.Duration
	conflict                          int
	owner                             string
	fs                                *flag.FlagSet
}

func (g *guardFlags) register(fs *flag.FlagSet) {
	g.fs = fs
	fs.DurationVar(&g.ttl, "ttl", 0, "lock TTL")
	fs.DurationVar(&g.wait, "wait", 0, "keep trying until D has passed")
	fs.DurationVar(&g.maxHold, "max-hold", 0, "stop extending after D")
	fs.DurationVar(&g.margin, "margin", 0, "SIGTERM this long before the validity ends")
	fs.DurationVar(&g.grace, "grace", 5*time.Second, "SIGTERM to SIGKILL delay")
	fs.IntVar(&g.conflict, "conflict-exit-code", ExitNotHeld, "exit code when not acquired")
	fs.StringVar(&g.owner, "owner", "", "owner label")
}

// check checks the flags that need no topology, and that a CMD was given.
func (g *guardFlags) check(env *Env, cmd *Command, flags *flag.FlagSet, argv []string) (int, bool) {
	switch {
	case len(argv) == 0:
		return usageErrorf(env, cmd, "missing CMD after --"), false
	case g.wait < 0:
		return usageErrorf(env, cmd, "-wait must not be negative, got %v", g.wait), false
	case g.maxHold < 0:
		return usageErrorf(env, cmd, "-max-hold must not be negative, got %v", g.maxHold), false
	case g.grace < 0:
		return usageErrorf(env, cmd, "-grace must not be negative, got %v", g.grace), false
	case flagGiven(flags, "margin") && g.margin <= 0:
		return usageErrorf(env, cmd, "-margin must be positive, got %v", g.margin), false
	case g.conflict < 1 || g.conflict > 255:
		return usageErrorf(env, cmd, "-conflict-exit-code must be in 1..255, got %d", g.conflict), false
	case g.conflict != ExitNotHeld && runOwnCode(g.conflict):
		return usageErrorf(env, cmd, "-conflict-exit-code %d is one of %s's own exit codes (1, 2, 4, 5, 126, 127): pick another, e.g. 75", g.conflict, cmd.Name), false
	}
	return checkTTLFlag(env, cmd, flags, g.ttl)
}

// deadlines computes the guard's timings for a hold of ttl.
func (g *guardFlags) deadlines(env *Env, cmd *Command, s *lockSession, ttl time.Duration) (deadlines, int, bool) {
	dl, err := runDeadlines(ttl, g.margin, g.grace, flagGiven(g.fs, "margin"))
	if err != nil {
		return dl, usageErrorf(env, cmd, "%v", err), false
	}
	if g.maxHold > 0 && g.maxHold-time.Millisecond-s.m.DriftBudget(g.maxHold) <= dl.margin {
		return dl, usageErrorf(env, cmd, "-max-hold %v leaves the command no time: it gets SIGTERM -margin %v before the lock's end; give a longer -max-hold or a shorter -margin", g.maxHold, dl.margin), false
	}
	if dl.clipped && flagGiven(g.fs, "grace") {
		fmt.Fprintf(env.Stderr, "redlock %s: -grace %v does not fit between SIGTERM (%v before the validity ends) and SIGKILL (%v before it): clipped to %v\n",
			cmd.Name, g.grace, dl.margin, dl.lead, dl.grace)
	}
	return dl, ExitOK, true
}

// holdAndRun takes what acquire takes (what names it for messages), runs argv
// under the guard while it holds, and releases it when argv ends: the body of run
// and elect. acquire returns the lock and the variables to add to the command's
// environment.
func holdAndRun(ctx context.Context, env *Env, cmd *Command, s *lockSession, gf *guardFlags, dl deadlines, what string, argv []string,
	acquire func(ctx context.Context) (*quorum.Lock, []string, error)) int {
	// Signals are ours from here on: forwarded to the child once it runs.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	var interrupted atomic.Bool
	watching := make(chan struct{})
	go func() { // SIGHUP does not cancel ctx: make every signal stop the acquisition
		defer close(watching)
		select {
		case <-sigs:
			interrupted.Store(true)
			cancel()
		case <-actx.Done():
		}
	}()

	l, extra, err := acquire(actx)
	if err != nil {
		if actx.Err() != nil {
			fmt.Fprintf(env.Stderr, "redlock %s: interrupted before %s was acquired; nothing is left locked\n", cmd.Name, what)
			return ExitError
		}
		code := acquireExit(actx, err)
		if code == ExitNotHeld {
			code = gf.conflict
		}
		fmt.Fprintf(env.Stderr, "redlock %s: %s\n", cmd.Name, escape.Text(s.redact(err.Error())))
		return code
	}
	release := func() {
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
		defer rcancel()
		switch err := l.Release(rctx); {
		case errors.Is(err, quorum.ErrPartialRelease):
			// Released: deleted on every master that answered, a quorum.
			fmt.Fprintf(env.Stderr, "redlock %s: note: %s\n", cmd.Name, escape.Text(s.redact(err.Error())))
		case err != nil:
			fmt.Fprintf(env.Stderr, "redlock %s: release %s: %s\n", cmd.Name, what, escape.Text(s.redact(err.Error())))
		}
	}
	cancel() // the signal goroutine exits; signals now go to the child
	<-watching
	if interrupted.Load() || ctx.Err() != nil {
		release()
		fmt.Fprintf(env.Stderr, "redlock %s: interrupted before the command started; %s released\n", cmd.Name, what)
		return ExitError
	}
	defer release()
	if gf.maxHold > 0 {
		dl.hard = holdEnd(l.Acquired(), gf.maxHold, s.m.DriftBudget(gf.maxHold))
	}
	return superviseRun(env, cmd.Name, l, argv, extra, dl, gf.maxHold, sigs)
}

// runOwnCode reports whether code is one that run exits with for its own reasons
// (error, usage, lost, capped, cannot start, not found): a -conflict-exit-code
// equal to one would make two outcomes indistinguishable.
func runOwnCode(code int) bool {
	switch code {
	case ExitError, ExitUsage, ExitLost, ExitCapped, 126, 127:
		return true
	}
	return false
}
