package e2e

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// acquire and run did not wait by default (-wait 0: exit 3 at once when held)
// where flock, consul lock and etcdctl lock wait. Without -wait they wait until
// the name is free, saying once on stderr who holds it; -wait 0 fails at once,
// as flock -n; an interrupted wait leaves nothing locked.

// waitTests are the waiting commands: acquire and run on the name "job".
var waitTests = []struct {
	name string
	args []string // after the command and its NAME
	// out is what stdout holds once the command got the lock ("" for the token).
	out string
}{
	{"acquire", []string{"-ttl", "5s"}, ""},
	{"run", []string{"--", "sh", "-c", "echo ran"}, "ran\n"},
}

// waitingFor starts cmd NAME args and waits until it says that it waits.
func (e *env) waitingFor(cmd, name string, args ...string) *background {
	e.t.Helper()
	b := e.start(append([]string{cmd, name}, args...)...)
	says := func() bool { // acquire and run wait, elect campaigns
		return strings.Contains(b.stderr.String(), "waiting for "+name) || strings.Contains(b.stderr.String(), "campaigning for "+name)
	}
	require.Eventually(e.t, says, 15*time.Second, 20*time.Millisecond, "%s never said that it waits: %s", cmd, b.stderr)
	select {
	case <-b.done:
		e.t.Fatalf("%s ended instead of waiting (exit %d): %s", cmd, b.code, b.stderr)
	default:
	}
	return b
}

func TestBugAcquireAndRunWaitByDefaultAsFlock(t *testing.T) {
	for _, tt := range waitTests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			first := e.acquireToken("job", "-ttl", "9s", "-owner", "first")
			waiter := e.waitingFor(tt.name, "job", tt.args...)
			assert.Contains(t, waiter.stderr.String(), "held by first", "it says who holds the name")
			assert.Equal(t, 1, strings.Count(waiter.stderr.String(), "waiting for"), "it says so once")
			assert.Empty(t, waiter.stdout.String(), "nothing is acquired or run while the name is held")

			require.Equal(t, 0, e.run("release", "job", "-token", first).code)
			require.Equal(t, 0, waiter.wait(t, 20*time.Second), "it got the name once it was free: %s", waiter.stderr)
			if tt.out != "" {
				assert.Equal(t, tt.out, waiter.stdout.String())
				return
			}
			token := strings.TrimSpace(waiter.stdout.String())
			held := e.keys("lock:job")
			assert.GreaterOrEqual(t, len(held), 3, "the waiter holds job on a quorum")
			for master, v := range held {
				assert.Equal(t, token, v, "job on %s is the waiter's", master)
			}
		})
	}
}

func TestBugWaitZeroFailsAtOnce(t *testing.T) {
	for _, tt := range waitTests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			first := e.acquireToken("job", "-ttl", "9s", "-owner", "first")
			// A wait would end with the holder's 9s TTL, in exit 0: exit 3 is the
			// answer of one round.
			r := e.run(append([]string{tt.name, "job", "-wait", "0"}, tt.args...)...)
			assert.Equal(t, 3, r.code, r.stderr)
			assert.Contains(t, r.stderr, "held by first")
			assert.NotContains(t, r.stderr, "waiting for")
			assert.Empty(t, r.stdout, "nothing acquired, nothing run")
			for master, v := range e.keys("lock:job") {
				assert.Equal(t, first, v, "job on %s is still the first holder's", master)
			}
		})
	}
}

func TestBugInterruptedWaitLeavesNothingLocked(t *testing.T) {
	for _, tt := range waitTests {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			t.Run(tt.name+"/"+sig.String(), func(t *testing.T) {
				e := newEnv(t)
				first := e.acquireToken("job", "-ttl", "9s", "-owner", "first")
				waiter := e.waitingFor(tt.name, "job", tt.args...)
				require.NoError(t, waiter.cmd.Process.Signal(sig))
				assert.Equal(t, 1, waiter.wait(t, 15*time.Second), "interrupted: %s", waiter.stderr)
				assert.Empty(t, waiter.stdout.String(), "nothing acquired, nothing run")
				require.Equal(t, 0, e.run("release", "job", "-token", first).code)
				assert.Empty(t, e.keys("lock:job"), "the waiter left nothing of its own behind")
			})
		}
	}
}

// elect's -wait 0 campaigned for ever where acquire's and run's -wait 0 fail at
// once: with another candidate leading, it exits 3 (or -conflict-exit-code) and
// runs nothing; without -wait it still campaigns until elected.
func TestBugElectWaitZeroFailsWhenAnotherLeads(t *testing.T) {
	e := newEnv(t)
	leader := e.start("elect", "crond", "-ttl", "9s", "-value", "first", "--", "sleep", "30")
	require.Eventually(t, func() bool { return strings.Contains(leader.stderr.String(), "leading crond") }, 15*time.Second, 20*time.Millisecond,
		"the first candidate never led: %s", leader.stderr)
	r := e.run("elect", "crond", "-wait", "0", "--", "sh", "-c", "echo ran")
	assert.Equal(t, 3, r.code, r.stderr)
	assert.Contains(t, r.stderr, "not elected: first leads crond")
	assert.Empty(t, r.stdout, "nothing run")
	r = e.run("elect", "crond", "-wait", "0", "-conflict-exit-code", "75", "--", "sh", "-c", "echo ran")
	assert.Equal(t, 75, r.code, r.stderr)

	waiter := e.waitingFor("elect", "crond", "--", "sh", "-c", "echo ran")
	require.NoError(t, leader.cmd.Process.Signal(syscall.SIGTERM))
	require.Equal(t, 0, waiter.wait(t, 20*time.Second), "elected once the leader resigned: %s", waiter.stderr)
	assert.Equal(t, "ran\n", waiter.stdout.String())
}
