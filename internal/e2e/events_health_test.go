package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// eventsRun is a running `events` against masters given with -masters.
type eventsRun struct {
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	done           chan int // the exit code
}

func startEvents(t *testing.T, masters string, args ...string) *eventsRun {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"events", "-masters", masters}, args...)...)
	cmd.Env = os.Environ()
	r := &eventsRun{cmd: cmd, stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan int, 1)}
	cmd.Stdout, cmd.Stderr = r.stdout, r.stderr
	require.NoError(t, cmd.Start())
	go func() {
		err := cmd.Wait()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		r.done <- code
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return r
}

// exit waits (at most 30 s) for events to end and returns its exit code.
func (r *eventsRun) exit(t *testing.T) int {
	t.Helper()
	select {
	case code := <-r.done:
		return code
	case <-time.After(30 * time.Second):
		t.Fatalf("events still running: %s%s", r.stdout, r.stderr)
		return -1
	}
}

// waitStderr waits (at most 30 s) until events has written want on stderr; when
// it has not, the failure shows what events had written by then, and whether it
// had exited.
func (r *eventsRun) waitStderr(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(r.stderr.String(), want) {
		select {
		case code := <-r.done:
			r.done <- code
			t.Fatalf("events exited %d before it wrote %q: stdout %q stderr %q", code, want, r.stdout.String(), r.stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("events did not write %q within 30 s: stdout %q stderr %q", want, r.stdout.String(), r.stderr.String())
		}
	}
}

// jsonEvents are the JSON lines printed so far, each checked against the schema.
func (r *eventsRun) jsonEvents(t *testing.T) []map[string]any {
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(r.stdout.String()), "\n") {
		if l != "" {
			out = append(out, checkDoc(t, "events", l))
		}
	}
	return out
}

// TestBugEventsDeadClusterIsNotQuiet: events against masters that do not answer
// said "poll mode" and then nothing, and exited 0; masters dying mid-stream
// printed nothing. Each master that stops or starts answering, and the quorum
// lost or regained, is an event, and events exits 1 without a quorum.
func TestBugEventsDeadClusterIsNotQuiet(t *testing.T) {
	t.Run("no master answers at the start", func(t *testing.T) {
		for _, args := range [][]string{nil, {"-json"}} {
			r := startEvents(t, "127.0.0.1:1", args...)
			assert.Equal(t, 1, r.exit(t), "stdout %s stderr %s", r.stdout, r.stderr)
			assert.Contains(t, r.stderr.String(), "no quorum of masters answers: 0 of 1 answered")
			assert.Contains(t, r.stderr.String(), "connection refused")
			if len(args) > 0 {
				var doc map[string]any
				require.NoError(t, json.Unmarshal([]byte(r.stdout.String()), &doc), r.stdout.String())
				assert.Contains(t, doc["error"], "no quorum")
			}
		}
	})

	t.Run("two of three masters killed mid-stream", func(t *testing.T) {
		c := redistest.Start(t, 3, redistest.Options{})
		r := startEvents(t, strings.Join(c.Addrs(), ","), "-json", "-mode", "poll", "-interval", "100ms", "-quorum-wait", "2s")
		r.waitStderr(t, "poll mode")
		c.Servers[1].Kill()
		c.Servers[2].Kill()
		assert.Equal(t, 1, r.exit(t), "stdout %s stderr %s", r.stdout, r.stderr)
		seen := map[string]int{}
		unreachable := map[any]bool{}
		for _, ev := range r.jsonEvents(t) {
			seen[ev["event"].(string)]++
			if ev["event"] == "master-unreachable" {
				unreachable[ev["master"]] = true
				assert.NotEmpty(t, ev["error"])
			}
			if ev["event"] == "quorum-lost" {
				assert.Len(t, ev["masters"], 1, "one master still answers: %v", ev)
			}
		}
		assert.Len(t, unreachable, 2, "both dead masters are named: %s", r.stdout)
		assert.Equal(t, 1, seen["quorum-lost"], r.stdout)
		assert.Contains(t, r.stderr.String(), "no quorum of masters answers for")
	})

	t.Run("a master down and back, then Ctrl-C", func(t *testing.T) {
		c := redistest.Start(t, 3, redistest.Options{})
		r := startEvents(t, strings.Join(c.Addrs(), ","), "-interval", "100ms")
		r.waitStderr(t, "mode")
		c.Servers[2].Kill()
		require.Eventually(t, func() bool { return strings.Contains(r.stdout.String(), "master-unreachable") }, 10*time.Second, 20*time.Millisecond, r.stdout.String())
		assert.Contains(t, r.stdout.String(), "(2 of 3 masters answer)")
		assert.NotContains(t, r.stdout.String(), "quorum-lost", "2 of 3 is a quorum")
		c.Servers[2].Restart(false)
		require.Eventually(t, func() bool { return strings.Contains(r.stdout.String(), "master-reachable") }, 10*time.Second, 20*time.Millisecond, r.stdout.String())
		require.NoError(t, r.cmd.Process.Signal(syscall.SIGINT))
		assert.Equal(t, 0, r.exit(t), "a quorum answers when stopped: %s", r.stderr)
	})
}
