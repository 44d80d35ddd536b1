package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// eventsStream starts `events -json` and returns a function that waits for an
// event of kind for name and returns it.
func eventsStream(t *testing.T, e *env, args ...string) (wait func(kind, name string) map[string]any, stderr *syncBuffer) {
	t.Helper()
	cmd := e.command("", append([]string{"events", "-json"}, args...)...)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr = &syncBuffer{}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "mode") }, 10*time.Second, 10*time.Millisecond)
	wait = func(kind, name string) map[string]any {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				require.True(t, ok, "events ended: %s", stderr.String())
				doc := checkDoc(t, "events", l)
				if doc["event"] == kind && doc["name"] == name {
					return doc
				}
			case <-deadline:
				t.Fatalf("no %s event for %s: %s", kind, name, stderr.String())
			}
		}
	}
	return wait, stderr
}

// With keyspace notifications on, a lock held for 50ms between two polls still
// shows: acquired (with its owner) and released.
func TestEventsKeyspaceSeesAShortHold(t *testing.T) {
	e := newEnv(t)
	for _, s := range e.c.Servers {
		require.NoError(t, s.Client().ConfigSet(context.Background(), "notify-keyspace-events", "Kg$x").Err())
	}
	wait, stderr := eventsStream(t, e, "-interval", "10s")
	assert.Contains(t, stderr.String(), "keyspace mode")
	r := e.run("run", "short", "-owner", "alice", "--", "sleep", "0.05")
	require.Equal(t, 0, r.code, r.stderr)
	acq := wait("acquired", "short")
	assert.Equal(t, "keyspace", acq["mode"])
	owner, _ := acq["owner"].(map[string]any)
	require.NotNil(t, owner, "the owner is known: %v", acq)
	assert.Equal(t, "alice", owner["owner"])
	assert.GreaterOrEqual(t, len(acq["masters"].([]any)), 3)
	wait("released", "short")

	e.acquireToken("ttl", "-ttl", "200ms")
	wait("acquired", "ttl")
	wait("expired", "ttl")

	e.acquireToken("stuck", "-ttl", "9s")
	wait("acquired", "stuck")
	r = e.run("force-expire", "stuck", "-yes", "-now")
	require.Equal(t, 0, r.code, r.stderr)
	wait("force-expired", "stuck")
}

// Without notifications, events falls back to snapshot diffs and says so.
func TestEventsPollFallback(t *testing.T) {
	e := newEnv(t)
	wait, stderr := eventsStream(t, e, "-interval", "100ms")
	assert.Contains(t, stderr.String(), "poll mode")
	tok := e.acquireToken("polled", "-ttl", "5s", "-owner", "bob")
	ev := wait("acquired", "polled")
	assert.Equal(t, "poll", ev["mode"])
	b, _ := json.Marshal(ev["owner"])
	assert.Contains(t, string(b), "bob")
	r := e.run("release", "polled", "-token", tok)
	require.Equal(t, 0, r.code, r.stderr)
	wait("released", "polled")
}

// Events name the primitive of their key: a semaphore's permit, an election's
// leadership, a shared holder (poll mode); a leader's record makes none.
func TestEventsNameThePrimitive(t *testing.T) {
	e := newEnv(t)
	wait, _ := eventsStream(t, e, "-mode", "poll", "-interval", "100ms")
	e.acquireToken("sem", "-permits", "2", "-ttl", "5s")
	ev := wait("acquired", "sem:permit:0")
	assert.Equal(t, "semaphore", ev["kind"])
	assert.Equal(t, "sem", ev["primitive"])
	assert.Equal(t, "0", fmt.Sprint(ev["permit"]))

	tok := e.acquireToken("doc", "-shared", "-ttl", "5s")
	ev = wait("acquired", "doc")
	assert.Equal(t, "shared", ev["kind"])
	require.Equal(t, 0, e.run("release", "doc", "-token", tok).code)
	wait("released", "doc")

	el := e.start("elect", "crond", "-ttl", "5s", "--", "sleep", "30")
	ev = wait("acquired", "crond:leader")
	assert.Equal(t, "leader", ev["kind"])
	assert.Equal(t, "crond", ev["primitive"])
	require.NoError(t, el.cmd.Process.Signal(syscall.SIGTERM))
	wait("released", "crond:leader")
}
