package e2e

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redlock/redlock/admin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAcquireExtendReleaseExitCodes(t *testing.T) {
	e := newEnv(t)
	first := e.run("acquire", "job", "-ttl", "5s", "-owner", "e2e")
	require.Equal(t, 0, first.code, first.stderr)
	token := strings.TrimSpace(first.stdout)
	require.NotEmpty(t, token)
	assert.NotContains(t, token, "\n", "stdout is the token alone")
	assert.Contains(t, first.stderr, "valid until")
	assert.Len(t, e.keys("lock:job"), 5)
	for _, v := range e.keys("lock:job") {
		assert.Equal(t, token, v)
	}

	steps := []struct {
		name string
		args []string
		code int
	}{
		{"acquire again is held", []string{"acquire", "job", "-wait", "0"}, 3},
		{"acquire -wait expires", []string{"acquire", "job", "-wait", "300ms"}, 3},
		{"extend with the token", []string{"extend", "job", "-token", token, "-ttl", "5s"}, 0},
		{"extend with a foreign token is lost", []string{"extend", "job", "-token", "rl1.notmine.x"}, 4},
		{"release with a foreign token keeps the lock and says it is lost", []string{"release", "job", "-token", "rl1.notmine.x"}, 4},
		{"still held", []string{"acquire", "job", "-wait", "0"}, 3},
		{"release", []string{"release", "job", "-token", token}, 0},
		{"release again: already gone", []string{"release", "job", "-token", token}, 0},
		{"extend after release is lost", []string{"extend", "job", "-token", token}, 4},
		{"acquire after release", []string{"acquire", "job", "-ttl", "1s"}, 0},
	}
	for _, st := range steps {
		r := e.run(st.args...)
		assert.Equal(t, st.code, r.code, "%s: stdout %q stderr %q", st.name, r.stdout, r.stderr)
		if st.code != 0 {
			assert.NotContains(t, r.stderr+r.stdout, token, "%s: the holder's token never shows in another command's output", st.name)
		}
	}
}

func TestAcquireJSONAndWait(t *testing.T) {
	e := newEnv(t)
	r := e.run("acquire", "w", "-ttl", "3s", "-json")
	require.Equal(t, 0, r.code, r.stderr)
	var doc struct {
		Name       string    `json:"name"`
		Key        string    `json:"key"`
		Token      string    `json:"token"`
		ValidUntil time.Time `json:"valid_until"`
		ValidityMS float64   `json:"validity_ms"`
		Votes      struct {
			Votes   int `json:"votes"`
			Quorum  int `json:"quorum"`
			Masters []struct {
				Master  string `json:"master"`
				Outcome string `json:"outcome"`
			} `json:"masters"`
		} `json:"votes"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), r.stdout)
	assert.Equal(t, "w", doc.Name)
	assert.Equal(t, "lock:w", doc.Key)
	assert.Equal(t, 5, doc.Votes.Votes)
	assert.Equal(t, 3, doc.Votes.Quorum)
	assert.Len(t, doc.Votes.Masters, 5)
	assert.Equal(t, "ok", doc.Votes.Masters[0].Outcome)
	assert.Greater(t, doc.ValidityMS, 2000.0)
	assert.WithinDuration(t, time.Now().Add(3*time.Second), doc.ValidUntil, 2*time.Second)

	// A waiter gets the lock once the holder releases it.
	waiter := e.command("", "acquire", "w", "-wait", "20s")
	var out bytes.Buffer
	waiter.Stdout = &out
	require.NoError(t, waiter.Start())
	time.Sleep(300 * time.Millisecond)
	require.Equal(t, 0, e.run("release", "w", "-token", doc.Token).code)
	require.NoError(t, waiter.Wait(), "the waiter acquired")
	assert.NotEmpty(t, strings.TrimSpace(out.String()))
	holders := 0
	for _, v := range e.keys("lock:w") {
		if v == strings.TrimSpace(out.String()) {
			holders++
		}
	}
	assert.GreaterOrEqual(t, holders, 3, "the waiter's value is on a majority")
}

func TestAcquireInterruptedWhileWaitingLeavesNothing(t *testing.T) {
	e := newEnv(t)
	// Held by another client (redsync-shaped), so the waiter keeps trying.
	mu := e.foreignLock("lock:busy", 10*time.Second)
	require.NoError(t, mu.Lock())
	holder := e.keys("lock:busy")["a"]
	waiter := e.command("", "acquire", "busy", "-wait", "20s")
	require.NoError(t, waiter.Start())
	time.Sleep(500 * time.Millisecond)
	require.NoError(t, waiter.Process.Signal(syscall.SIGINT))
	err := waiter.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 1, ee.ExitCode())
	for name, v := range e.keys("lock:busy") {
		assert.Equal(t, holder, v, "master %s: only the other client's value", name)
	}
}

func TestForceExpire(t *testing.T) {
	e := newEnv(t)
	r := e.run("acquire", "fx", "-ttl", "8s")
	require.Equal(t, 0, r.code, r.stderr)
	stale := strings.TrimSpace(r.stdout)
	require.Equal(t, 0, e.run("release", "fx", "-token", stale).code)
	r = e.run("acquire", "fx", "-ttl", "8s", "-owner", "current")
	require.Equal(t, 0, r.code, r.stderr)
	current := strings.TrimSpace(r.stdout)

	// A stale token deletes nothing, and exits 1: the name is not free.
	r = e.run("force-expire", "fx", "-token", stale, "-yes", "-json")
	require.Equal(t, 1, r.code, r.stderr)
	var doc struct {
		Deleted int `json:"deleted"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), r.stdout)
	assert.Equal(t, 0, doc.Deleted)
	assert.Len(t, e.keys("lock:fx"), 5)

	// Without -yes it shows the holder and asks; anything but "yes" aborts.
	r = e.runIn("no\n", "force-expire", "fx")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "current", "shows who holds it")
	assert.Contains(t, r.stderr, "aborted")
	assert.NotContains(t, r.stderr, current)
	assert.Len(t, e.keys("lock:fx"), 5)

	// "yes" revokes: the holder's value becomes its tombstone on every master,
	// which keeps the name taken (the holder, a token kept by a script, may still
	// act until its validity ends).
	r = e.runIn("yes\n", "force-expire", "fx")
	assert.Equal(t, 6, r.code, r.stderr)
	assert.Contains(t, r.stderr, "revoked on 5 of 5")
	assert.Contains(t, r.stderr, "is revoked")
	for m, v := range e.keys("lock:fx") {
		assert.True(t, admin.IsTombstone(v), "%s: %q", m, v)
	}
	r = e.run("acquire", "fx", "-wait", "0")
	assert.Equal(t, 3, r.code, r.stderr)
	assert.Contains(t, r.stderr, "revoked, free at", "the conflict names the revocation")
	r = e.run("locks")
	assert.Contains(t, r.stdout, "revoked")
	// Revoked already: nothing to revoke, and the name is not free (never exit 0).
	r = e.run("force-expire", "fx", "-yes")
	assert.Equal(t, 6, r.code, r.stderr)
	assert.Contains(t, r.stderr, "is revoked")

	// The revoked holder's release (acknowledgement) frees the name at once: no
	// other owner holds it, so it exits 0 as a release of a lock already gone.
	require.Equal(t, 0, e.run("release", "fx", "-token", current).code, "its tombstone is deleted")
	assert.Empty(t, e.keys("lock:fx"), "the tombstone of its own value is gone")

	// -now deletes at once.
	r = e.run("acquire", "fx", "-ttl", "8s")
	require.Equal(t, 0, r.code, r.stderr)
	r = e.run("force-expire", "fx", "-yes", "-now")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, "deleted on 5 of 5")
	assert.Empty(t, e.keys("lock:fx"))
	r = e.run("acquire", "fx", "-wait", "0")
	assert.Equal(t, 0, r.code, "free at once: %s", r.stderr)
}

// The CLI against a client that locks as redsync does; the real redsync runs
// against quorum in the bench module (bench/interop_test.go).
func TestInteropWithForeignClient(t *testing.T) {
	e := newEnv(t)
	r := e.run("acquire", "shared", "-ttl", "5s")
	require.Equal(t, 0, r.code, r.stderr)
	token := strings.TrimSpace(r.stdout)
	mu := e.foreignLock("lock:shared", 5*time.Second)
	assert.Error(t, mu.Lock(), "a lock held by redlock acquire blocks a redsync-shaped client")
	require.Equal(t, 0, e.run("release", "shared", "-token", token).code)
	require.NoError(t, mu.Lock(), "free once released")
	assert.Equal(t, 3, e.run("acquire", "shared", "-wait", "0").code, "a redsync-shaped lock blocks redlock acquire")
	ok, err := mu.Unlock()
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, 0, e.run("acquire", "shared", "-ttl", "1s").code)
}

// run meeting a revoked name says so, and when it is free.
func TestRunOnARevokedNameSaysWhenItIsFree(t *testing.T) {
	e := newEnv(t)
	r := e.run("acquire", "rv", "-ttl", "9s")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, 6, e.run("force-expire", "rv", "-yes").code)
	r = e.run("run", "rv", "-wait", "0", "--", "true")
	assert.Equal(t, 3, r.code, r.stderr)
	assert.Contains(t, r.stderr, "rv is revoked, free at")
}
