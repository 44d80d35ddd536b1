package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redlock/redlock/quorum"
)

var runCmd = &Command{
	Name:     "run",
	Synopsis: "hold a lock while a command runs",
	Usage: `Usage: redlock run NAME [-ttl D] [-wait D] [-max-hold D] [-grace D] [-owner S] [-config PATH] [-var name=value] [-timeout D] -- CMD [ARGS...]

Takes the lock NAME (waiting up to -wait), runs CMD in its own process group
while a keep-alive extends the lock in the background, releases the lock when CMD
exits and exits with CMD's status (128+N when CMD was killed by signal N).

CMD gets REDLOCK_NAME, REDLOCK_TOKEN, REDLOCK_VALID_UNTIL (RFC 3339, the validity
at start; the keep-alive moves it) and REDLOCK_FENCE when the lock policy uses
fencing. SIGINT, SIGTERM and SIGHUP are forwarded to CMD's process group.

When the lock is lost (a majority of masters no longer hold it, the validity is
about to end without an extension, the policy's max_extensions or -max-hold is
reached) CMD's process group gets SIGTERM before the validity ends, then SIGKILL
after -grace; the reason goes to stderr and run exits 4.

Flags:
  -ttl D       lock TTL (default: the lock policy's ttl, else the cluster's ttl)
  -wait D      keep trying to take the lock until D has passed (default 0: one round)
  -max-hold D  stop extending after D; CMD is stopped when the validity ends (default: no cap)
  -grace D     time between SIGTERM and SIGKILL when the lock is lost (default 5s)
  -owner S     owner label written into the lock value
` + commonUsage + `
                    (run: bounds the acquisition after -wait; the command may run longer)

Exit codes:
  N    CMD's exit status (128+signal when it was killed by a signal)
  1    error (fewer than a quorum of masters reachable, interrupted before CMD started)
  2    usage error or invalid topology file
  3    not acquired: held by another owner, or -wait expired
  4    the lock was lost while CMD ran (CMD was stopped)
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
	ttl := flags.Duration("ttl", 0, "lock TTL")
	wait := flags.Duration("wait", 0, "keep trying until D has passed")
	maxHold := flags.Duration("max-hold", 0, "stop extending after D")
	grace := flags.Duration("grace", 5*time.Second, "SIGTERM to SIGKILL delay")
	owner := flags.String("owner", "", "owner label")
	name, argv, code, ok := parseLockArgs(env, cmd, flags, args)
	if !ok {
		return code
	}
	switch {
	case len(argv) == 0:
		return usageErrorf(env, cmd, "missing CMD after --")
	case *wait < 0:
		return usageErrorf(env, cmd, "-wait must not be negative, got %v", *wait)
	case *maxHold < 0:
		return usageErrorf(env, cmd, "-max-hold must not be negative, got %v", *maxHold)
	case *grace < 0:
		return usageErrorf(env, cmd, "-grace must not be negative, got %v", *grace)
	}
	if code, ok := checkTTLFlag(env, cmd, flags, *ttl); !ok {
		return code
	}
	s, code := openSession(env, cmd, &cf)
	if s == nil {
		return code
	}
	defer s.close()
	lockTTL, code := s.ttlFor(env, cmd, name, *ttl, flagGiven(flags, "ttl"))
	if code != ExitOK {
		return code
	}

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

	policy := s.cluster.PolicyFor(name)
	opts := append(s.policyOptions(name, *owner), quorum.WithKeepAlive(quorum.KeepAlive{MaxExtensions: policy.MaxExtensions, MaxHold: *maxHold}))
	tctx, tcancel := context.WithTimeout(actx, *wait+cf.timeout)
	l, err := waitAcquire(tctx, s.m, name, lockTTL, *wait, opts...)
	tcancel()
	if err != nil {
		if actx.Err() != nil {
			fmt.Fprintf(env.Stderr, "redlock run: interrupted before %s was acquired; nothing is left locked\n", name)
			return ExitError
		}
		code := acquireExit(actx, err)
		fmt.Fprintf(env.Stderr, "redlock run: %s\n", s.redact(err.Error()))
		return code
	}
	release := func() {
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
		defer rcancel()
		if err := l.Release(rctx); err != nil {
			fmt.Fprintf(env.Stderr, "redlock run: release %s: %s\n", name, s.redact(err.Error()))
		}
	}
	cancel() // the signal goroutine exits; signals now go to the child
	<-watching
	if interrupted.Load() || ctx.Err() != nil {
		release()
		fmt.Fprintf(env.Stderr, "redlock run: interrupted before the command started; %s released\n", name)
		return ExitError
	}
	defer release()

	child := exec.Command(argv[0], argv[1:]...)
	child.Stdin, child.Stdout, child.Stderr = env.Stdin, env.Stdout, env.Stderr
	child.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	child.Env = append(os.Environ(),
		"REDLOCK_NAME="+name,
		"REDLOCK_TOKEN="+l.Token(),
		"REDLOCK_VALID_UNTIL="+l.Until().Format(time.RFC3339Nano),
	)
	if f := l.Fence(); f > 0 {
		child.Env = append(child.Env, "REDLOCK_FENCE="+strconv.FormatInt(f, 10))
	}
	if err := child.Start(); err != nil {
		fmt.Fprintf(env.Stderr, "redlock run: start %s: %v\n", argv[0], err)
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			return 127
		}
		return 126
	}
	pgid := child.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()

	// The lock counts as lost a margin before its validity ends without extension,
	// so the child is stopped while the lock still protects it.
	margin := max(lockTTL/5, 10*time.Millisecond)
	var lost error
	var killTimer <-chan time.Time
	done := l.Done()
	for {
		var guardC <-chan time.Time
		var guard *time.Timer
		if lost == nil {
			guard = time.NewTimer(max(time.Until(l.Until())-margin, 0))
			guardC = guard.C
		}
		select {
		case sig := <-sigs:
			_ = syscall.Kill(-pgid, sig.(syscall.Signal))
		case <-done:
			done = nil
			if lost == nil {
				lost = l.Err()
				killTimer = stopChild(env, pgid, lost, *grace)
			}
		case <-guardC:
			if time.Until(l.Until()) <= margin {
				lost = fmt.Errorf("%w: validity of %s ends at %s without an extension", quorum.ErrLost, name, l.Until().Format(time.RFC3339Nano))
				if cause := l.Err(); cause != nil {
					lost = cause
				}
				killTimer = stopChild(env, pgid, lost, *grace)
			}
		case <-killTimer:
			fmt.Fprintf(env.Stderr, "redlock run: command still running %v after SIGTERM: SIGKILL\n", *grace)
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			killTimer = nil
		case err := <-exited:
			if guard != nil {
				guard.Stop()
			}
			if lost != nil {
				return ExitLost
			}
			return exitStatus(err, child.ProcessState)
		}
		if guard != nil {
			guard.Stop()
		}
	}
}

// stopChild sends SIGTERM to the child's process group after the lock was lost and
// returns the channel of the SIGKILL deadline.
func stopChild(env *Env, pgid int, why error, grace time.Duration) <-chan time.Time {
	fmt.Fprintf(env.Stderr, "redlock run: lock lost (%v): sending SIGTERM to the command, SIGKILL in %v\n", why, grace)
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	return time.After(grace)
}

// exitStatus returns the child's exit code, 128+N when signal N killed it.
func exitStatus(err error, ps *os.ProcessState) int {
	if ps == nil {
		if err != nil {
			return ExitError
		}
		return ExitOK
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}
