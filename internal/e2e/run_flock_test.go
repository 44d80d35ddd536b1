package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBugRunFlockFormRunsTheCommand: "run NAME CMD ARGS" without "--", the form
// flock users write and cron lines copy, runs CMD with its own flags under the
// lock; the "--" form keeps working, and several names still need it.
func TestBugRunFlockFormRunsTheCommand(t *testing.T) {
	e := newEnv(t)
	// The child prints what it got: its arguments and the lock it runs under.
	show := `printf '%s|' "$REDLOCK_NAME" "$REDLOCK_NAMES" "$@"`
	tests := []struct {
		name string
		args []string
		code int
		out  string // the child's stdout
	}{
		{"CMD with a flag of its own", []string{"run", "job", "sh", "-c", show, "x", "-j4"}, 0, "job||-j4|"},
		{"CMD with run's own flag name", []string{"run", "job", "sh", "-c", show, "x", "-wait", "-ttl", "1s"}, 0, "job||-wait|-ttl|1s|"},
		{"run's flags before CMD", []string{"run", "job", "-ttl", "2s", "-wait", "1s", "sh", "-c", show, "x", "a"}, 0, "job||a|"},
		{"run's flags before NAME", []string{"run", "-ttl", "2s", "job", "sh", "-c", show}, 0, "job||"},
		{"exit status passed", []string{"run", "r1", "sh", "-c", "exit 7"}, 7, ""},
		{"CMD without arguments of its own", []string{"run", "job", "true"}, 0, ""},
		{"the -- form", []string{"run", "job", "--", "sh", "-c", show, "x", "-c"}, 0, "job||-c|"},
		{"several names need --", []string{"run", "a", "b", "--", "sh", "-c", show}, 0, "a b|a b|"},
		{"elect in the flock form", []string{"elect", "e9", "sh", "-c", show, "x", "-v"}, 0, "e9||-v|"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.run(tt.args...)
			require.Equal(t, tt.code, r.code, "stderr: %s", r.stderr)
			assert.Equal(t, tt.out, r.stdout)
			assert.NotContains(t, r.stderr, "unknown flag")
			for _, k := range []string{"lock:job", "lock:r1", "lock:a", "lock:b"} {
				assert.Empty(t, e.keys(k), "%s released after the command", k)
			}
		})
	}

	// The command really ran under the lock: while it runs, the masters hold
	// NAME with the token the child was given.
	cmd := e.command("", "run", "held", "-ttl", "3s", "sh", "-c", `echo "$REDLOCK_TOKEN"; sleep 30`)
	var out syncBuffer
	cmd.Stdout = &out
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	e.waitKey("lock:held")
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "\n") }, 10*time.Second, 20*time.Millisecond)
	tok := strings.TrimSpace(out.String())
	for master, v := range e.keys("lock:held") {
		assert.Equal(t, tok, v, "master %s holds the child's token", master)
	}

	// Usage errors still say how to give CMD.
	r := e.run("run", "job")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "missing CMD")
}
