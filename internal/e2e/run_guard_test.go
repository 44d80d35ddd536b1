package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redlock/redlock/admin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The run guard: the command never outlives the lock, even when run itself is
// killed or frozen. These tests watch what the user relies on: the child's own
// writes, timestamped by the child, and whether the child process still exists.

// ticker is a child script that writes "TAG PID NANOS" into file every 20 ms.
func ticker(tag, file string) string {
	return fmt.Sprintf(`while :; do echo "%s $$ $(date +%%s%%N)" >> %q; sleep 0.02; done`, tag, file)
}

// ticks reads the ticks of tag from file: the child's pid and the tick times.
func ticks(t *testing.T, file, tag string) (pid int, at []time.Time) {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != tag {
			continue
		}
		pid, _ = strconv.Atoi(f[1])
		ns, err := strconv.ParseInt(f[2], 10, 64)
		require.NoError(t, err, line)
		at = append(at, time.Unix(0, ns))
	}
	return pid, at
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// The first run is killed (or frozen for two TTLs) while its child ticks; a second
// run -wait takes the lock and ticks into the same file. No tick of the first child
// may come after the first tick of the second, and the first child must be gone.
func TestRunGuardChildNeverOutlivesTheLock(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name  string
		fault func(t *testing.T, run *exec.Cmd)
	}{
		{"run killed with SIGKILL", func(t *testing.T, run *exec.Cmd) {
			require.NoError(t, run.Process.Signal(syscall.SIGKILL))
		}},
		{"run frozen with SIGSTOP for two TTLs", func(t *testing.T, run *exec.Cmd) {
			require.NoError(t, run.Process.Signal(syscall.SIGSTOP))
			t.Cleanup(func() { _ = run.Process.Signal(syscall.SIGCONT) })
		}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := fmt.Sprintf("guard%d", i)
			file := filepath.Join(t.TempDir(), "ticks")
			first := e.command("", "run", name, "-ttl", "1s", "--", "sh", "-c", ticker("A", file))
			require.NoError(t, first.Start())
			e.waitKey("lock:" + name)
			time.Sleep(300 * time.Millisecond)
			tt.fault(t, first)
			faultAt := time.Now()
			// The second child first notes whether the first child still exists
			// (its /proc state; Z is a dead child not yet reaped).
			seen := fmt.Sprintf(`pa=$(awk '$1=="A"{p=$2} END{print p}' %q); st=$(sed 's/^.*) //' /proc/$pa/stat 2>/dev/null | cut -c1); echo "SEEN $pa ${st:-gone}" >> %q; `, file, file)
			second := e.command("", "run", name, "-ttl", "1s", "-wait", "10s", "--", "sh", "-c", seen+ticker("B", file)+" & sleep 0.5; kill $!")
			var errb bytes.Buffer
			second.Stderr = &errb
			require.NoError(t, second.Run(), errb.String())
			if tt.name != "run killed with SIGKILL" {
				time.Sleep(time.Until(faultAt.Add(2 * time.Second)))
				require.NoError(t, first.Process.Signal(syscall.SIGCONT))
				var ee *exec.ExitError
				require.ErrorAs(t, first.Wait(), &ee)
				assert.Equal(t, 4, ee.ExitCode(), "a run that was frozen past the validity reports the loss")
			} else {
				_ = first.Wait()
			}

			pidA, a := ticks(t, file, "A")
			_, b := ticks(t, file, "B")
			require.NotEmpty(t, a, "the first child ticked")
			require.NotEmpty(t, b, "the second child ticked")
			lastA, firstB := a[len(a)-1], b[0]
			t.Logf("first child's last tick %v after the fault; second's first tick %v after it",
				lastA.Sub(faultAt), firstB.Sub(faultAt))
			assert.True(t, lastA.Before(firstB), "the first child ticked %v after the second started", lastA.Sub(firstB))
			assert.False(t, alive(pidA), "the first child (pid %d) is gone", pidA)
			raw, err := os.ReadFile(file)
			require.NoError(t, err)
			require.Contains(t, string(raw), fmt.Sprintf("SEEN %d ", pidA), "the second child looked for the first")
			assert.Regexp(t, fmt.Sprintf(`SEEN %d (gone|Z)\n`, pidA), string(raw), "the first child was gone when the second acquired")
		})
	}
}

// Bug 2 of the safety review: -max-hold below the TTL gave the child no margin, and
// -grace outlasted the validity. A child that traps SIGTERM and writes 1s later,
// with -grace 10s: the write never lands after a second client acquired.
func TestBug2MaxHoldBelowTTLAndLongGraceNeverOverlap(t *testing.T) {
	e := newEnv(t)
	file := filepath.Join(t.TempDir(), "writes")
	script := fmt.Sprintf(`trap 'sleep 1; echo "late $(date +%%s%%N)" >> %q; exit 0' TERM; while :; do sleep 0.05; done`, file)
	first := e.command("", "run", "hold", "-ttl", "3s", "-max-hold", "2s", "-grace", "10s", "--", "sh", "-c", script)
	var errA bytes.Buffer
	first.Stderr = &errA
	start := time.Now()
	require.NoError(t, first.Start())
	e.waitKey("lock:hold")
	// A second client polls until it gets the lock, and notes when.
	var acquiredAt time.Time
	for time.Since(start) < 10*time.Second {
		r := e.run("acquire", "hold", "-ttl", "5s", "-json")
		if r.code == 0 {
			acquiredAt = time.Now()
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.False(t, acquiredAt.IsZero(), "the second client never got the lock")
	err := first.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 5, ee.ExitCode(), "max-hold has its own exit code: %s", errA.String())
	assert.Contains(t, errA.String(), "-max-hold 2.0s reached")
	assert.Contains(t, errA.String(), "-grace 10.0s does not fit")
	t.Logf("second client acquired %v after start", acquiredAt.Sub(start))
	if b, err := os.ReadFile(file); err == nil {
		f := strings.Fields(string(b))
		require.Len(t, f, 2, string(b))
		ns, err := strconv.ParseInt(f[1], 10, 64)
		require.NoError(t, err)
		assert.True(t, time.Unix(0, ns).Before(acquiredAt), "the late write landed %v after the second client acquired", time.Unix(0, ns).Sub(acquiredAt))
	}
}

func TestRunConflictExitCode(t *testing.T) {
	e := newEnv(t)
	holder := e.command("", "run", "conflict", "--", "sleep", "30")
	require.NoError(t, holder.Start())
	t.Cleanup(func() { _ = holder.Process.Signal(syscall.SIGTERM); _ = holder.Wait() })
	e.waitKey("lock:conflict")
	r := e.run("run", "conflict", "-wait", "0", "-conflict-exit-code", "75", "--", "sh", "-c", "echo ran")
	assert.Equal(t, 75, r.code, r.stderr)
	assert.NotContains(t, r.stdout, "ran")
	assert.Contains(t, r.stderr, "redlock run:", "run's own codes come with a line on stderr")
	// The child's own 3 is passed through, without a line from run.
	r = e.run("run", "free", "--", "sh", "-c", "exit 3")
	assert.Equal(t, 3, r.code)
	assert.NotContains(t, r.stderr, "redlock run:")

	r = e.run("run", "x", "-conflict-exit-code", "0", "--", "true")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "-conflict-exit-code")
	r = e.run("run", "x", "-ttl", "1s", "-margin", "1s", "--", "true")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "-margin")
}

// heldOn counts the masters whose value is a holder's, not a revocation's
// tombstone.
func heldOn(values map[string]string) int {
	n := 0
	for _, v := range values {
		if !admin.IsTombstone(v) {
			n++
		}
	}
	return n
}

// A force-expire (a revocation) of a lock held under run reaches the child as SIGTERM through the
// wake-up channel, not at the next extension (a third of the 10 s TTL, or later):
// well under a second (typically 10-50 ms; the bound leaves room for a loaded
// machine's scheduling and stays far below the extension). The time counts from
// the last moment the test saw the lock on a majority, so the start-up of the
// force-expire process itself (slow on a loaded machine) is not counted, and the
// count is never shorter than the real one.
func TestRunForceExpireStopsTheChildPromptly(t *testing.T) {
	e := newEnv(t)
	file := filepath.Join(t.TempDir(), "term")
	script := fmt.Sprintf(`trap 'echo "term $(date +%%s%%N)" >> %q; exit 0' TERM; while :; do sleep 0.01; done`, file)
	run := e.command("", "run", "fx", "-ttl", "10s", "--", "sh", "-c", script)
	require.NoError(t, run.Start())
	e.waitKey("lock:fx")
	time.Sleep(300 * time.Millisecond) // the loss watch's subscription is confirmed
	lastHeld := make(chan time.Time, 1)
	go func() {
		held := time.Now() // the start of the last read that saw it on a majority
		for {
			at := time.Now()
			if heldOn(e.keys("lock:fx")) < 3 { // a revocation's tombstone is not the holder's
				lastHeld <- held
				return
			}
			held = at
			time.Sleep(time.Millisecond)
		}
	}()
	r := e.run("force-expire", "fx", "-yes")
	require.Equal(t, 6, r.code, "revoked: %s", r.stderr)
	before := <-lastHeld
	err := run.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 4, ee.ExitCode())
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	f := strings.Fields(string(b))
	require.Len(t, f, 2, string(b))
	ns, err := strconv.ParseInt(f[1], 10, 64)
	require.NoError(t, err)
	took := time.Unix(0, ns).Sub(before)
	t.Logf("SIGTERM reached the child %v after the lock was last seen held", took)
	assert.Less(t, took, time.Second)
}

// The guard itself killed: the command dies with it (parent-death signal, and run
// kills what is left of the group), run exits 1 and releases the lock.
func TestRunGuardKilledTakesTheCommandWithIt(t *testing.T) {
	e := newEnv(t)
	file := filepath.Join(t.TempDir(), "ticks")
	run := e.command("", "run", "guardkill", "-ttl", "5s", "--", "sh", "-c", ticker("A", file))
	var errb bytes.Buffer
	run.Stderr = &errb
	require.NoError(t, run.Start())
	e.waitKey("lock:guardkill")
	pidA := firstPid(t, file, "A")
	require.NoError(t, syscall.Kill(parentOf(t, pidA), syscall.SIGKILL)) // the guard
	err := run.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 1, ee.ExitCode(), errb.String())
	assert.Contains(t, errb.String(), "process group was killed")
	assert.Eventually(t, func() bool {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pidA))
		return len(b) == 0 || strings.Contains(string(b), ") Z ")
	}, 2*time.Second, 10*time.Millisecond, "the child is gone")
	assert.Empty(t, e.keys("lock:guardkill"), "released")
}

// firstPid waits for the first tick of tag in file and returns the ticking pid.
func firstPid(t *testing.T, file, tag string) int {
	t.Helper()
	var pid int
	require.Eventually(t, func() bool {
		if _, err := os.Stat(file); err == nil {
			pid, _ = ticks(t, file, tag)
		}
		return pid > 0
	}, 5*time.Second, 10*time.Millisecond)
	return pid
}

// parentOf returns the parent pid of pid, from /proc.
func parentOf(t *testing.T, pid int) int {
	t.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	require.NoError(t, err)
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	ppid, err := strconv.Atoi(fields[1])
	require.NoError(t, err)
	return ppid
}

// Regression: a service manager that stops everything at once (systemd's
// KillMode=control-group) sends SIGTERM to run, the guard and the command. The
// guard died of it, and the parent-death signal SIGKILLed the command before its
// SIGTERM handler could run; run exited 1. Now the guard survives SIGTERM and keeps
// enforcing the deadline, and the command shuts down cleanly.
func TestRunGuardSurvivesSIGTERMToEveryProcess(t *testing.T) {
	e := newEnv(t)
	file := filepath.Join(t.TempDir(), "ticks")
	script := fmt.Sprintf(`trap 'sleep 0.2; echo "bye $$ 0" >> %q; exit 0' TERM; %s`, file, ticker("A", file))
	run := e.command("", "run", "allterm", "-ttl", "5s", "--", "sh", "-c", script)
	var errb bytes.Buffer
	run.Stderr = &errb
	require.NoError(t, run.Start())
	e.waitKey("lock:allterm")
	pidA := firstPid(t, file, "A")
	for _, pid := range []int{run.Process.Pid, parentOf(t, pidA), pidA} {
		require.NoError(t, syscall.Kill(pid, syscall.SIGTERM))
	}
	require.NoError(t, run.Wait(), "the command's own status: %s", errb.String())
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Contains(t, string(b), fmt.Sprintf("bye %d", pidA), "the command's SIGTERM handler ran to its end")
	assert.Empty(t, e.keys("lock:allterm"), "released")
}

// Regression: a -margin of half the TTL or more was accepted, and the command got
// SIGTERM before the keep-alive's first extension on every run (exit 4 "lock
// lost" with nothing wrong). It is a usage error now; a margin below half the TTL
// lets the command outlive several extensions.
func TestRunMarginOfHalfTheTTLIsRefused(t *testing.T) {
	e := newEnv(t)
	r := e.run("run", "margin", "-ttl", "1s", "-margin", "600ms", "--", "sleep", "1.5")
	assert.Equal(t, 2, r.code, r.stderr)
	assert.Contains(t, r.stderr, "-margin 600ms must be shorter than half")
	r = e.run("run", "margin", "-ttl", "1s", "-margin", "200ms", "--", "sleep", "1.5")
	assert.Equal(t, 0, r.code, r.stderr)
}

// Regression: without a terminal (cron, CI), a stopped command (SIGSTOP from an
// administrator, a debugger) made run send SIGTSTP to its own process group, which
// stopped the script that called run too. Job control is for terminals: now the
// command stays stopped under the lock until continued, and the caller runs on.
func TestRunStoppedCommandDoesNotStopTheCaller(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	// The caller: a shell in a process group of its own, running run and then
	// writing "after" once run is done.
	caller := exec.Command("sh", "-c", fmt.Sprintf(`%q run stopme -ttl 2s -- sh -c 'echo $$ > %q; kill -STOP $$; echo resumed'; echo "after $?"`, bin, pidFile))
	caller.Env = append(os.Environ(), "REDLOCK_CONFIG="+e.config)
	caller.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	caller.Stdout, caller.Stderr = &out, &out
	require.NoError(t, caller.Start())
	t.Cleanup(func() { _ = syscall.Kill(-caller.Process.Pid, syscall.SIGKILL) })
	var child int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(pidFile)
		child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && child > 0 && procState(child) == "T"
	}, 10*time.Second, 10*time.Millisecond, "the command stopped itself")
	time.Sleep(500 * time.Millisecond) // run has seen it
	require.NotEqual(t, "T", procState(caller.Process.Pid), "the caller is not stopped")
	assert.NotEmpty(t, e.keys("lock:stopme"), "the lock is still held (and extended) while the command is stopped")
	require.NoError(t, syscall.Kill(child, syscall.SIGCONT))
	require.NoError(t, caller.Wait())
	assert.Contains(t, out.String(), "resumed")
	assert.Contains(t, out.String(), "after 0")
}

// procState returns the state letter of pid from /proc ("" when it is gone).
func procState(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return f[0]
}
