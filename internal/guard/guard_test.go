package guard

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The test binary is also the supervisor: Start re-executes it with Command.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == Command {
		os.Exit(Main(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// tickerIgnoringTerm writes the time into file every 20ms and ignores SIGTERM (a
// child that will not stop by itself), so only SIGKILL ends it.
func tickerIgnoringTerm(file string) []string {
	return []string{"sh", "-c", fmt.Sprintf(`trap '' TERM; while :; do date +%%s%%N >> %q; sleep 0.02; done`, file)}
}

func lastTick(t *testing.T, file string) time.Time {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	lines := strings.Fields(string(b))
	require.NotEmpty(t, lines)
	ns, err := strconv.ParseInt(lines[len(lines)-1], 10, 64)
	require.NoError(t, err)
	return time.Unix(0, ns)
}

// The guard alone enforces the deadline: whatever its caller does after starting
// it, the command's last act comes before the deadline in force.
func TestGuardKillsBeforeTheDeadline(t *testing.T) {
	tests := []struct {
		name string
		hard bool // HardUntil at start + 1s, Until at start + 5s (else Until at start + 1s)
		// act plays the caller after the start; it returns the deadline in force.
		act func(g *Guard, start time.Time) time.Time
	}{
		{"the caller is frozen: the first deadline holds", false, func(g *Guard, start time.Time) time.Time {
			return start.Add(time.Second)
		}},
		{"the caller dies: SIGKILL at once", false, func(g *Guard, start time.Time) time.Time {
			time.Sleep(200 * time.Millisecond)
			require.NoError(t, g.Close())
			return time.Now().Add(100 * time.Millisecond)
		}},
		{"an earlier deadline re-arms both timers", false, func(g *Guard, start time.Time) time.Time {
			time.Sleep(100 * time.Millisecond)
			until := start.Add(600 * time.Millisecond)
			require.NoError(t, g.SetUntil(until))
			return until
		}},
		// Regression (the -max-hold race): run frozen or killed after the keep-alive
		// sent its final, shortened extension but before forwarding the shortened
		// deadline. The guard knew the -max-hold end from the start, and a later
		// deadline never moves past it.
		{"a later deadline never moves past HardUntil", true, func(g *Guard, start time.Time) time.Time {
			time.Sleep(100 * time.Millisecond)
			require.NoError(t, g.SetUntil(start.Add(10*time.Second)))
			return start.Add(time.Second)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "ticks")
			start := time.Now()
			cfg := Config{
				Argv: tickerIgnoringTerm(file), Env: os.Environ(), Stdout: os.Stdout, Stderr: os.Stderr,
				Until:  start.Add(time.Second),
				Margin: 300 * time.Millisecond, Grace: 10 * time.Second, KillLead: DefaultKillLead,
			}
			if tt.hard {
				cfg.Until, cfg.HardUntil = start.Add(5*time.Second), start.Add(time.Second)
			}
			g, err := Start(cfg)
			require.NoError(t, err)
			t.Cleanup(func() { g.Kill(); _ = g.Close() })
			deadline := tt.act(g, start)
			var ex Exit
			select {
			case ex = <-g.Done():
			case <-time.After(15 * time.Second):
				t.Fatal("the command outlived its deadline by 14s")
			}
			require.NoError(t, ex.Err)
			assert.Equal(t, syscall.SIGKILL, ex.Signal, "the command ignores SIGTERM")
			last := lastTick(t, file)
			assert.True(t, last.Before(deadline), "the command acted %v after the deadline", last.Sub(deadline))
			assert.Error(t, syscall.Kill(g.Pid(), 0), "the command is gone")
		})
	}
}

// Regression: the supervisor's pipes to its caller (fds 3 and 4) leaked into the
// command, which could read run's control messages, write forged statuses, and,
// when it or an escaped descendant kept the status pipe open, stop run from
// noticing that the supervisor died.
func TestGuardCommandDoesNotInheritThePipes(t *testing.T) {
	var out strings.Builder
	g, err := Start(Config{
		Argv:  []string{"sh", "-c", `for f in 3 4; do if { true >&$f; } 2>/dev/null; then echo "open $f"; fi; done; echo checked`},
		Env:   os.Environ(),
		Until: time.Now().Add(time.Minute), Margin: time.Second, KillLead: DefaultKillLead, Stdout: &out, Stderr: os.Stderr,
	})
	require.NoError(t, err)
	defer g.Close()
	ex := <-g.Done()
	require.NoError(t, ex.Err)
	assert.Equal(t, "checked\n", out.String())
}

// Regression: a caller frozen between acquiring and starting the guard made the
// guard start the command past its deadline and kill it a moment later; in that
// moment it could act while another client held the lock. Past deadline - margin
// the command is not started at all.
func TestGuardDoesNotStartTheCommandPastItsDeadline(t *testing.T) {
	for _, left := range []time.Duration{-time.Second, 0, 200 * time.Millisecond} {
		t.Run(left.String(), func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "ran")
			_, err := Start(Config{
				Argv: []string{"sh", "-c", "echo ran > " + file}, Env: os.Environ(), Stdout: os.Stdout, Stderr: os.Stderr,
				Until: time.Now().Add(left), Margin: 300 * time.Millisecond, KillLead: DefaultKillLead,
			})
			require.ErrorIs(t, err, ErrExpired)
			time.Sleep(100 * time.Millisecond)
			assert.NoFileExists(t, file, "the command did not run")
		})
	}
}
