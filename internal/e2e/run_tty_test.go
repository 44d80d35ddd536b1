package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// tmuxSession runs shell command line in a new detached tmux session (its own
// server socket) and returns a function that captures its screen.
func tmuxSession(t *testing.T, line string) (capture func() string, keys func(...string)) {
	t.Helper()
	tmux, err := exec.LookPath("tmux")
	require.NoError(t, err, "tmux is needed (the README's test command installs it)")
	sock := filepath.Join(t.TempDir(), "tmux.sock")
	run := func(args ...string) string {
		out, err := exec.Command(tmux, append([]string{"-S", sock}, args...)...).CombinedOutput()
		require.NoError(t, err, "tmux %v: %s", args, out)
		return string(out)
	}
	run("new-session", "-d", "-s", "run", "-x", "120", "-y", "30", line)
	t.Cleanup(func() { _ = exec.Command(tmux, "-S", sock, "kill-server").Run() })
	capture = func() string {
		out, _ := exec.Command(tmux, "-S", sock, "capture-pane", "-p", "-t", "run").CombinedOutput()
		return string(out)
	}
	keys = func(k ...string) { run(append([]string{"send-keys", "-t", "run"}, k...)...) }
	return capture, keys
}

// In a terminal, the command gets the terminal's foreground: an interactive child
// reads what the user types (under a background process group, read would fail).
func TestRunGivesTheCommandTheTerminal(t *testing.T) {
	e := newEnv(t)
	line := fmt.Sprintf(`REDLOCK_CONFIG=%q %q run tty -- sh -c 'read a; echo "got [$a]"'; echo "exit $?"; sleep 30`, e.config, bin)
	capture, keys := tmuxSession(t, line)
	e.waitKey("lock:tty")
	time.Sleep(200 * time.Millisecond)
	keys("hello", "Enter")
	require.Eventually(t, func() bool { return strings.Contains(capture(), "exit 0") }, 10*time.Second, 50*time.Millisecond, "screen:\n%s", capture())
	require.Contains(t, capture(), "got [hello]")
	require.Empty(t, e.keys("lock:tty"), "released")
}

// Job control behaves: Ctrl-Z stops the command and gives the shell its prompt
// back, fg gives the command the terminal again.
func TestRunJobControl(t *testing.T) {
	e := newEnv(t)
	bash, err := exec.LookPath("bash")
	require.NoError(t, err)
	capture, keys := tmuxSession(t, bash+" --norc --noprofile")
	time.Sleep(300 * time.Millisecond)
	keys(fmt.Sprintf(`export REDLOCK_CONFIG=%q PS1='PROMPT$ '`, e.config), "Enter")
	keys(fmt.Sprintf(`%q run jobs -ttl 10s -- sh -c 'read a; echo "got [$a]"'`, bin), "Enter")
	e.waitKey("lock:jobs")
	time.Sleep(200 * time.Millisecond)
	keys("C-z")
	require.Eventually(t, func() bool { return strings.Contains(capture(), "Stopped") }, 10*time.Second, 50*time.Millisecond, "screen:\n%s", capture())
	keys("fg", "Enter")
	time.Sleep(300 * time.Millisecond)
	keys("hello", "Enter")
	require.Eventually(t, func() bool { return strings.Contains(capture(), "got [hello]") }, 10*time.Second, 50*time.Millisecond, "screen:\n%s", capture())
	require.Eventually(t, func() bool { return len(e.keys("lock:jobs")) == 0 }, 5*time.Second, 20*time.Millisecond, "released")
}

// Regression: after Ctrl-Z and bg, run gave the terminal to the command anyway (it
// took the terminal without checking that it was in the foreground), so the
// command, in the background, read the line typed at the shell's prompt. Now the
// terminal stays the shell's until fg.
func TestRunBgLeavesTheTerminalToTheShell(t *testing.T) {
	e := newEnv(t)
	bash, err := exec.LookPath("bash")
	require.NoError(t, err)
	capture, keys := tmuxSession(t, bash+" --norc --noprofile")
	time.Sleep(300 * time.Millisecond)
	keys(fmt.Sprintf(`export REDLOCK_CONFIG=%q PS1='PROMPT$ '`, e.config), "Enter")
	keys(fmt.Sprintf(`%q run bgjob -ttl 10s -- sh -c 'read a; echo "got [$a]"'`, bin), "Enter")
	e.waitKey("lock:bgjob")
	time.Sleep(200 * time.Millisecond)
	keys("C-z")
	require.Eventually(t, func() bool { return strings.Contains(capture(), "Stopped") }, 10*time.Second, 50*time.Millisecond, "screen:\n%s", capture())
	keys("bg", "Enter")
	time.Sleep(500 * time.Millisecond)
	keys("echo alive-$((6*7))", "Enter")
	require.Eventually(t, func() bool { return strings.Contains(capture(), "alive-42") }, 10*time.Second, 50*time.Millisecond,
		"the shell read the line, not the command; screen:\n%s", capture())
	require.NotContains(t, capture(), "got [echo", "the command read the shell's line")
	keys("fg", "Enter")
	time.Sleep(300 * time.Millisecond)
	keys("hello", "Enter")
	require.Eventually(t, func() bool { return strings.Contains(capture(), "got [hello]") }, 10*time.Second, 50*time.Millisecond, "screen:\n%s", capture())
	require.Eventually(t, func() bool { return len(e.keys("lock:bgjob")) == 0 }, 5*time.Second, 20*time.Millisecond, "released")
}
