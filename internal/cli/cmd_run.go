package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/internal/human"
	"github.com/redlock/redlock/quorum"
)

// runArgs are the arguments of run.
type runArgs struct {
	namesArgs
	guardArgs
	primArgs
}

func (a *runArgs) flags(f *Flags) {
	a.guardArgs.flags(f, "run")
	a.primArgs.flags(f)
	a.metricsFlagOn(f)
	a.common.flags(f)
}

// guardArgs are the flags of the commands that run CMD under the guard while
// they hold something (run, elect), and CMD.
type guardArgs struct {
	ttl, wait, maxHold, margin, grace time.Duration
	conflict                          int
	owner                             string
	argv                              []string
	gf                                *Flags
	// orphan, when set, is how the guard releases the lock if run dies before
	// the command (run_orphan.go).
	orphan func() (args, env []string)
}

func (a *guardArgs) flags(f *Flags, prog string) {
	a.gf = f
	ttlHelp := "lock TTL (default: the lock policy's ttl, else the cluster's ttl)"
	waitUsage := waitHelp + `;
-timeout bounds the acquisition after D (the command may run longer)`
	if prog == "elect" {
		ttlHelp = `leadership TTL: how long a dead leader keeps the office (default: the
lock policy's ttl for NAME, else the cluster's ttl)`
		waitUsage = `give up after campaigning for D and exit 3; 0 exits 3 at once when
another candidate leads (as flock -n); default: campaign until elected`
	}
	f.Duration(&a.ttl, "ttl", 0, ttlHelp)
	f.Duration(&a.wait, "wait", 0, waitUsage).atLeast(0)
	f.Duration(&a.maxHold, "max-hold", 0, `stop extending after D: CMD gets SIGTERM -margin before acquisition + D
and `+prog+` exits 5 (default: no cap)`).atLeast(0)
	f.Duration(&a.margin, "margin", 0, `SIGTERM this long before the validity ends (default ttl/5, at least
10ms; shorter than ttl/2, when the keep-alive extends the lock)`).atLeast(positive)
	f.Duration(&a.grace, "grace", 5*time.Second, "time between SIGTERM and SIGKILL (default 5s, clipped to -margin - 100ms)").atLeast(0)
	f.Int(&a.conflict, "conflict-exit-code", "N", ExitNotHeld, `exit N instead of 3 when not acquired (as flock -E);
not one of `+prog+`'s own codes below`)
	f.String(&a.owner, "owner", "S", "", "owner label written into the value")
}

// parse takes NAME and CMD: "NAME... -- CMD ARGS..." or, as flock, "NAME CMD
// ARGS..." (then CMD starts at the first word after NAME that is not a flag of
// run, and every word after it is CMD's; several names need the "--").
func (a *runArgs) parse(p *parsed) error {
	names, err := checkLockNames(p.pos, true)
	if err != nil {
		return err
	}
	a.names = names
	if err := a.guardArgs.parse(p, "run "+strings.Join(names, " ")); err != nil {
		return err
	}
	if !p.given("wait") {
		a.wait = waitForever
	}
	return a.check()
}

// parse takes CMD and checks the guard's flags; usage shows how to give CMD.
func (a *guardArgs) parse(p *parsed, usage string) error {
	a.argv = p.rest
	switch {
	case len(a.argv) == 0:
		return usagef("missing CMD: redlock %s -- CMD [ARGS...]", usage)
	case a.conflict < 1 || a.conflict > 255:
		return usagef("-conflict-exit-code must be in 1..255, got %d", a.conflict)
	case a.conflict != ExitNotHeld && runOwnCode(a.conflict):
		return usagef("-conflict-exit-code %d is one of the command's own exit codes (1, 2, 4, 5, 126, 127): pick another, e.g. 75", a.conflict)
	}
	return checkTTL(p, a.ttl)
}

var _ = define(&Command{
	Name:     "run",
	Synopsis: "hold a lock while a command runs",
	Args:     "NAME [NAME...] [--] CMD [ARGS...]",
	About: `
Takes the lock NAME (waiting up to -wait), runs CMD while a keep-alive extends the
lock in the background, releases the lock when CMD exits and exits with CMD's
status (128+N when CMD was killed by signal N). As with flock, the -- may be left
out: CMD is then the first word after NAME that is not one of run's flags, and
every word after it is CMD's ("redlock run job make -j4").

Waiting: as flock, consul lock and etcdctl lock, run waits while NAME is held,
until it is free, and says once on stderr who holds it; Ctrl-C or SIGTERM while
waiting gives up (exit 1, nothing left locked). -wait 0 exits 3 at once instead
(or -conflict-exit-code), as "flock -n"; -wait D gives up after D, as "flock -w".
A cron line wants -wait 0: a job still running when the next one starts makes the
next one give up rather than queue behind it, one more process every interval.
At most one report at a time across machines:
  */15 * * * * redlock run -wait 0 -max-hold 14m report /usr/local/bin/report

With a "--", every word before it is a NAME: several names need it, and so does a
CMD whose own arguments include a "--" ("redlock run job -- git diff -- file").

The command never outlives the lock. CMD runs in a process group of its own under a
guard: a small supervisor process (this binary again) that learns every new
validity deadline from run and enforces it by itself, so it holds even when run is
killed (SIGKILL) or frozen (SIGSTOP, a debugger):
  - SIGTERM to CMD's whole process group at the deadline minus -margin when the
    lock was not extended, and at once when the lock is lost (a majority of
    masters no longer hold it, whatever removed it: a force-expire, a DEL,
    FLUSHALL, a restart without data; noticed within a few round trips, or
    within a second on masters without client tracking);
  - SIGKILL -grace after SIGTERM, and never later than 100ms before the deadline,
    whatever -grace says (a -grace that does not fit is clipped, with a message);
  - SIGKILL at once when run dies before CMD exits, and then the lock is
    released, so that the name is free at once;
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
REDLOCK_SHARED=1. SIGINT, SIGTERM and SIGHUP sent to run are forwarded to CMD's
process group.

` + primNote + ` Several names need the "--" before CMD.`,
	ExitNote: `Run's own codes are always explained by a "redlock run:" line on stderr; pick a
-conflict-exit-code that CMD never uses to tell "not acquired" apart.`,
	Exits: []Exit{
		{-1, "CMD's exit status (128+signal when it was killed by a signal)"},
		{1, "error (fewer than a quorum of masters reachable, interrupted before CMD started)"},
		exitBadInput,
		{3, `not acquired: held by another owner under -wait 0 (every permit taken; an
exclusive holder against -shared), or -wait D expired (or -conflict-exit-code N)`},
		{4, `the lock was lost while CMD ran (CMD was stopped), or run was delayed so long
after acquiring that the validity ended before CMD could start (not started)`},
		{5, "-max-hold or the lock policy's max_extensions ended the run (CMD was stopped)"},
		{126, "CMD could not be started"},
		{127, "CMD was not found"},
	},
	Complete: Completion{LockName: true, Several: true},
}, withSession(runRun))

// exitStatus is the outcome of a command whose code was explained already (run's
// CMD status, its own lines on stderr).
func exitStatus(code int) error {
	if code == ExitOK {
		return nil
	}
	return &exitError{code: code, err: fmt.Errorf("exit status %d", code), shown: true, doc: skipDoc{}}
}

func runRun(ctx context.Context, env *Env, s *lockSession, a *runArgs) error {
	k, err := a.kind(s, a.names)
	if err != nil {
		return err
	}
	lockTTL, err := s.ttlForAll(a.names, a.ttl, a.gf.given("ttl"))
	if err != nil {
		return err
	}
	dl, err := a.deadlines(env, s, "run", lockTTL)
	if err != nil {
		return err
	}
	a.orphan = func() ([]string, []string) { return a.orphanRelease(a.names) }
	opts := append(s.kindOptions(k, a.owner), quorum.WithLossWatch(),
		quorum.WithKeepAlive(quorum.KeepAlive{MaxExtensions: s.maxExtensionsFor(a.names), MaxHold: a.maxHold}))
	return holdAndRun(ctx, env, s, "run", &a.guardArgs, dl, k.what(), func(ctx context.Context) (*quorum.Lock, []string, error) {
		tctx, cancel := context.WithTimeout(ctx, addSat(a.wait, a.timeout))
		defer cancel()
		wait := waitPlan{d: a.wait, first: a.timeout, notice: s.waitNotice(env.Stderr, "run", k, a.wait, a.timeout)}
		t, err := acquireKind(tctx, s.m, k, lockTTL, wait, opts...)
		if err != nil && ctx.Err() == nil && acquireExit(ctx, err) == ExitNotHeld && k.byKey() {
			// Who keeps it: a holder, or a revocation and when it is free.
			return nil, nil, fmt.Errorf("%s is %s: %w", a.names[0], s.heldBy(ctx, a.names[0], a.timeout), err)
		}
		if err != nil {
			return nil, nil, err
		}
		return t.Lock, kindEnv(k, t), nil
	})
}

// deadlines computes the guard's timings for a hold of ttl.
func (a *guardArgs) deadlines(env *Env, s *lockSession, prog string, ttl time.Duration) (deadlines, error) {
	dl, err := runDeadlines(ttl, a.margin, a.grace, a.gf.given("margin"))
	if err != nil {
		return dl, usagef("%v", err)
	}
	if a.maxHold > 0 && a.maxHold-time.Millisecond-s.m.DriftBudget(a.maxHold) <= dl.margin {
		return dl, usagef("-max-hold %s leaves the command no time: it gets SIGTERM -margin %s before the lock's end; give a longer -max-hold or a shorter -margin", human.Duration(a.maxHold), human.Duration(dl.margin))
	}
	if dl.clipped && a.gf.given("grace") {
		fmt.Fprintf(env.Stderr, "redlock %s: -grace %s does not fit between SIGTERM (%s before the validity ends) and SIGKILL (%s before it): clipped to %s\n",
			prog, human.Duration(a.grace), human.Duration(dl.margin), human.Duration(dl.lead), human.Duration(dl.grace))
	}
	return dl, nil
}

// holdAndRun takes what acquire takes (what names it for messages), runs a.argv
// under the guard while it holds, and releases it when the command ends: the body
// of run and elect (prog). acquire returns the lock and the variables to add to
// the command's environment.
func holdAndRun(ctx context.Context, env *Env, s *lockSession, prog string, a *guardArgs, dl deadlines, what string,
	acquire func(ctx context.Context) (*quorum.Lock, []string, error)) error {
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
			return failf(ExitError, "interrupted before %s was acquired; nothing is left locked", what)
		}
		code := acquireExit(actx, err)
		if code == ExitNotHeld {
			code = a.conflict
		}
		return s.fail(code, err)
	}
	release := func() {
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
		defer rcancel()
		switch err := l.Release(rctx); {
		case errors.Is(err, quorum.ErrPartialRelease):
			// Released: deleted on every master that answered, a quorum.
			fmt.Fprintf(env.Stderr, "redlock %s: note: %s\n", prog, escape.Text(s.redact(err.Error())))
		case err != nil:
			fmt.Fprintf(env.Stderr, "redlock %s: release %s: %s\n", prog, escape.Text(what), escape.Text(s.redact(err.Error())))
		}
	}
	cancel() // the signal goroutine exits; signals now go to the child
	<-watching
	if interrupted.Load() || ctx.Err() != nil {
		release()
		return failf(ExitError, "interrupted before the command started; %s released", what)
	}
	defer release()
	if a.maxHold > 0 {
		dl.hard = holdEnd(l.Acquired(), a.maxHold, s.m.DriftBudget(a.maxHold))
	}
	return exitStatus(superviseRun(env, prog, l, a, extra, dl, sigs))
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
