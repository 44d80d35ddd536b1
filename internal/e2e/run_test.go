package e2e

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunPassesExitStatus(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name   string
		script string
		code   int
	}{
		{"success", `test -n "$REDLOCK_TOKEN" && test "$REDLOCK_NAME" = r && test -n "$REDLOCK_VALID_UNTIL"`, 0},
		{"failure", "exit 1", 1},
		{"status 42", "exit 42", 42},
		{"killed by SIGTERM", "kill -TERM $$", 128 + 15},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.run("run", "r", "-ttl", "2s", "--", "sh", "-c", tt.script)
			assert.Equal(t, tt.code, r.code, r.stderr)
			assert.Empty(t, e.keys("lock:r"), "released after the command")
		})
	}
	// The token given to the child is the value on the masters.
	r := e.run("run", "r", "--", "sh", "-c", `redis_value=$REDLOCK_TOKEN; echo "$redis_value"`)
	require.Equal(t, 0, r.code, r.stderr)
	assert.True(t, strings.HasPrefix(strings.TrimSpace(r.stdout), "rl1."), r.stdout)

	// Held by someone else: 3, the command never runs.
	mu := e.foreignLock("lock:r", 5*time.Second)
	require.NoError(t, mu.Lock())
	r = e.run("run", "r", "-wait", "0", "--", "sh", "-c", "echo ran")
	assert.Equal(t, 3, r.code)
	assert.NotContains(t, r.stdout, "ran")
	_, _ = mu.Unlock()

	// A fencing policy hands the child a strictly increasing REDLOCK_FENCE.
	var fences []int
	for i := 0; i < 2; i++ {
		r = e.run("run", "fenced/job", "--", "sh", "-c", `echo "$REDLOCK_FENCE"`)
		require.Equal(t, 0, r.code, r.stderr)
		var f int
		_, err := fmt.Sscan(strings.TrimSpace(r.stdout), &f)
		require.NoError(t, err, "REDLOCK_FENCE=%q", r.stdout)
		fences = append(fences, f)
	}
	assert.Greater(t, fences[0], 0)
	assert.Greater(t, fences[1], fences[0])

	r = e.run("run", "r", "--", "/nonexistent/command")
	assert.Equal(t, 127, r.code)
	assert.Empty(t, e.keys("lock:r"))
}

func TestRunKeepsTheLockAlive(t *testing.T) {
	e := newEnv(t)
	// The command outlives three TTLs; the keep-alive holds the lock throughout.
	r := e.run("run", "alive", "-ttl", "1s", "--", "sh", "-c", "sleep 2.5")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Empty(t, e.keys("lock:alive"))
}

func TestRunStopsTheCommandWhenTheLockIsLost(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name   string
		args   []string
		steal  bool
		script string
		within time.Duration
		code   int
		msg    string
	}{
		{"stolen by force-expire", []string{"-ttl", "2s", "-grace", "2s"}, true, "sleep 30", 8 * time.Second, 4, "revoked by an administrator (force-expire)"},
		{"stolen, command ignores SIGTERM", []string{"-ttl", "2s", "-grace", "1s"}, true, `trap "" TERM; sleep 30`, 8 * time.Second, 4, "revoked by an administrator (force-expire)"},
		{"max-hold reached", []string{"-ttl", "1s", "-max-hold", "1500ms", "-grace", "1s"}, false, "sleep 30", 8 * time.Second, 5, "-max-hold 1.5s reached"},
		{"policy's max_extensions reached", []string{"-grace", "1s"}, false, "sleep 30", 8 * time.Second, 5, "max_extensions reached"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := fmt.Sprintf("lost%d", i)
			if !tt.steal && len(tt.args) == 2 {
				name = "capped/job" // lock "capped/*": ttl 1s, max_extensions 1
			}
			args := append(append([]string{"run", name}, tt.args...), "--", "sh", "-c", tt.script)
			cmd := e.command("", args...)
			var errb bytes.Buffer
			cmd.Stderr = &errb
			require.NoError(t, cmd.Start())
			e.waitKey("lock:" + name)
			start := time.Now()
			if tt.steal {
				r := e.run("force-expire", name, "-yes")
				require.Equal(t, 6, r.code, "revoked: %s", r.stderr)
			}
			waited := make(chan error, 1)
			go func() { waited <- cmd.Wait() }()
			select {
			case err := <-waited:
				var ee *exec.ExitError
				require.ErrorAs(t, err, &ee)
				assert.Equal(t, tt.code, ee.ExitCode(), errb.String())
				assert.Contains(t, errb.String(), tt.msg)
			case <-time.After(tt.within):
				_ = cmd.Process.Kill()
				t.Fatalf("run did not stop within %v: %s", tt.within, errb.String())
			}
			t.Logf("stopped after %v", time.Since(start))
		})
	}
}

func TestRunSIGINTReleases(t *testing.T) {
	e := newEnv(t)
	cmd := e.command("", "run", "int", "-ttl", "2s", "--", "sleep", "30")
	require.NoError(t, cmd.Start())
	e.waitKey("lock:int")
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	err := cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 128+int(syscall.SIGINT), ee.ExitCode(), "the child's status: killed by the forwarded SIGINT")
	assert.Empty(t, e.keys("lock:int"), "no key left on any master")
}
