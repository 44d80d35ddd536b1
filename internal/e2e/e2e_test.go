// Package e2e runs the built redlock binary against five real redis-server masters:
// the lock commands' exit codes, output and clean-up, as scripts see them.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// bin is the redlock binary built once for the package.
var bin string

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == childArg { // a child of the black-box harness
		os.Exit(childMain(os.Args[2:]))
	}
	dir, err := os.MkdirTemp("", "redlock-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "redlock")
	build := exec.Command("go", "build", "-o", bin, "github.com/redlock/redlock")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build redlock:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// env is five masters and a topology file naming them.
type env struct {
	t      *testing.T
	c      *redistest.Cluster
	config string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	c := redistest.Start(t, 5, redistest.Options{})
	var b strings.Builder
	b.WriteString(clusterHead("e2e"))
	for _, s := range c.Servers {
		fmt.Fprintf(&b, "  master %q { address = %q }\n", s.Name, s.Addr())
	}
	b.WriteString(`  lock "capped/*" {
    ttl            = "1s"
    max_extensions = 1
  }
  lock "fenced/*" {
    fencing = true
  }
  lock "pool/*" {
    permits = 2
  }
}
`)
	path := filepath.Join(t.TempDir(), "redlock.hcl")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))
	return &env{t: t, c: c, config: path}
}

// clusterHead opens a test cluster block: throwaway masters started by the test,
// short TTLs, a few quick retries; the caller adds masters and policies, and the
// closing brace.
func clusterHead(name string) string {
	return `cluster "` + name + `" {
  key_prefix   = "lock:"
  ttl          = "3s"
  max_ttl      = "10s"
  node_timeout = "250ms"
  # brand-new throwaway masters started by the test
  restart_quarantine = false
  settings {
    appendfsync = "always"
  }
  retry {
    attempts = 5
    delay    = "50ms"
    jitter   = "20ms"
  }
`
}

// result is one finished redlock invocation.
type result struct {
	stdout, stderr string
	code           int
}

func (e *env) command(stdin string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "REDLOCK_CONFIG="+e.config)
	cmd.Stdin = strings.NewReader(stdin)
	return cmd
}

// run runs redlock to completion (bounded by 30 s).
func (e *env) run(args ...string) result { return e.runIn("", args...) }

func (e *env) runIn(stdin string, args ...string) result {
	e.t.Helper()
	return finish(e.t, e.command(stdin, args...))
}

// finish runs cmd to completion (bounded by 30 s) and returns its output and code.
func finish(t *testing.T, cmd *exec.Cmd) result {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
		}
	}()
	err := cmd.Wait()
	close(done)
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return result{out.String(), errb.String(), code}
}

// keys returns, per master, the value of key ("" when absent on it), for the masters holding it.
func (e *env) keys(key string) map[string]string {
	e.t.Helper()
	out := map[string]string{}
	for _, s := range e.c.Servers {
		v, err := s.Client().Get(context.Background(), key).Result()
		if err == nil {
			out[s.Name] = v
		}
	}
	return out
}

// waitKey waits until key is present on a majority of the masters.
func (e *env) waitKey(key string) {
	e.t.Helper()
	require.Eventually(e.t, func() bool { return len(e.keys(key)) >= 3 }, 10*time.Second, 20*time.Millisecond, "key %s never appeared", key)
}

// foreignLock is another client's lock on key, taken the way redsync takes one
// (SET NX PX of a random 24-character base64 value on every master, held with a
// majority): the real redsync is a benchmark peer and lives in the bench module,
// whose interop tests run it against this project.
type foreignLock struct {
	e     *env
	key   string
	ttl   time.Duration
	value string
}

func (e *env) foreignLock(key string, ttl time.Duration) *foreignLock {
	return &foreignLock{e: e, key: key, ttl: ttl}
}

// Lock takes the lock on a majority of the masters, or takes back what it set and
// fails.
func (f *foreignLock) Lock() error {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	f.value = base64.StdEncoding.EncodeToString(b)
	n := 0
	for _, s := range f.e.c.Servers {
		if ok, err := s.Client().SetNX(context.Background(), f.key, f.value, f.ttl).Result(); err == nil && ok {
			n++
		}
	}
	if n > len(f.e.c.Servers)/2 {
		return nil
	}
	_, _ = f.Unlock()
	return fmt.Errorf("foreign lock %s: set on %d of %d masters", f.key, n, len(f.e.c.Servers))
}

// Unlock deletes the key where it still holds this lock's value; true when a
// majority was deleted.
func (f *foreignLock) Unlock() (bool, error) {
	const del = `if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`
	n := 0
	for _, s := range f.e.c.Servers {
		r, err := s.Client().Eval(context.Background(), del, []string{f.key}, f.value).Int()
		if err != nil {
			return false, err
		}
		n += r
	}
	return n > len(f.e.c.Servers)/2, nil
}

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
		{"acquire again is held", []string{"acquire", "job"}, 3},
		{"acquire -wait expires", []string{"acquire", "job", "-wait", "300ms"}, 3},
		{"extend with the token", []string{"extend", "job", "-token", token, "-ttl", "5s"}, 0},
		{"extend with a foreign token is lost", []string{"extend", "job", "-token", "rl1.notmine.x"}, 4},
		{"release with a foreign token keeps the lock and says it is lost", []string{"release", "job", "-token", "rl1.notmine.x"}, 4},
		{"still held", []string{"acquire", "job"}, 3},
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
	r = e.run("run", "r", "--", "sh", "-c", "echo ran")
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
		{"stolen by force-expire", []string{"-ttl", "2s", "-grace", "2s"}, true, "sleep 30", 8 * time.Second, 4, "lock lost"},
		{"stolen, command ignores SIGTERM", []string{"-ttl", "2s", "-grace", "1s"}, true, `trap "" TERM; sleep 30`, 8 * time.Second, 4, "lock lost"},
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
				require.Equal(t, 0, r.code, r.stderr)
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

// locksDoc is the part of `locks -json` the tests read.
type locksDoc struct {
	Quorum   int `json:"quorum"`
	Answered int `json:"answered"`
	Masters  []struct {
		Master   string `json:"master"`
		Answered bool   `json:"answered"`
	} `json:"masters"`
	Locks []struct {
		Name       string  `json:"name"`
		State      string  `json:"state"`
		Votes      int     `json:"votes"`
		Library    string  `json:"library"`
		ValidityMS float64 `json:"validity_ms"`
		Value      string  `json:"value"`
		Owner      *struct {
			Label string `json:"owner"`
			PID   int    `json:"pid"`
		} `json:"owner"`
		Masters []struct {
			Master  string  `json:"master"`
			Present bool    `json:"present"`
			Value   string  `json:"value"`
			PTTLMS  float64 `json:"pttl_ms"`
		} `json:"masters"`
	} `json:"locks"`
}

func TestLocksJSON(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	mu := e.foreignLock("lock:by-redsync", 8*time.Second)
	require.NoError(t, mu.Lock())
	r := e.run("acquire", "by-redlock", "-ttl", "8s", "-owner", "nightly-report")
	require.Equal(t, 0, r.code, r.stderr)
	token := strings.TrimSpace(r.stdout)
	for i, s := range e.c.Servers {
		cl := s.Client()
		if i < 2 {
			require.NoError(t, cl.Set(ctx, "lock:partial", "0123456789abcdef0123456789abcdef", 8*time.Second).Err())
		}
		switch i {
		case 0, 1:
			require.NoError(t, cl.Set(ctx, "lock:contested", "11111111-2222-3333-4444-555555555555", 8*time.Second).Err())
		case 2, 3:
			require.NoError(t, cl.Set(ctx, "lock:contested", "99999999-2222-3333-4444-555555555555", 8*time.Second).Err())
		}
	}

	r = e.run("locks", "-json")
	require.Equal(t, 0, r.code, r.stderr)
	assert.NotContains(t, r.stdout, token, "full values never appear")
	assert.NotContains(t, r.stdout, e.keys("lock:by-redsync")["a"], "full foreign values never appear")
	var doc locksDoc
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), r.stdout)
	assert.Equal(t, 5, doc.Answered)
	byName := map[string]int{}
	for i, l := range doc.Locks {
		byName[l.Name] = i
	}
	want := []struct {
		name, state, library string
		votes                int
	}{
		{"by-redsync", "held", "redsync", 5},
		{"by-redlock", "held", "redlock", 5},
		{"partial", "partial", "node-redlock", 2},
		{"contested", "contested", "redlock.net/pottery", 2},
	}
	for _, w := range want {
		i, ok := byName[w.name]
		require.True(t, ok, "lock %s listed", w.name)
		l := doc.Locks[i]
		assert.Equal(t, w.state, l.State, w.name)
		assert.Equal(t, w.library, l.Library, w.name)
		assert.Equal(t, w.votes, l.Votes, w.name)
		assert.Len(t, l.Masters, 5, w.name)
	}
	ours := doc.Locks[byName["by-redlock"]]
	require.NotNil(t, ours.Owner, "owner decoded")
	assert.Equal(t, "nightly-report", ours.Owner.Label)
	assert.Greater(t, ours.ValidityMS, 5000.0)
	assert.Greater(t, ours.Masters[0].PTTLMS, 5000.0)
	assert.True(t, strings.HasPrefix(ours.Value, "rl1."))

	// Text output: one row per lock plus one per master; -match filters.
	r = e.run("locks", "-match", "by-*")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "by-redlock")
	assert.Contains(t, r.stdout, "nightly-report")
	assert.NotContains(t, r.stdout, "contested")
	assert.NotContains(t, r.stdout, token)

	// Two masters down: still listed, the missing ones named.
	e.c.Servers[3].Kill()
	e.c.Servers[4].Kill()
	r = e.run("locks", "-json")
	require.Equal(t, 0, r.code, r.stderr)
	doc = locksDoc{}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc))
	assert.Equal(t, 3, doc.Answered)
	assert.False(t, doc.Masters[3].Answered)
	assert.Contains(t, r.stderr, "master d")
	// Three down: exit 1 naming them.
	e.c.Servers[2].Kill()
	r = e.run("locks")
	assert.Equal(t, 1, r.code)
	for _, n := range []string{"master c", "master d", "master e"} {
		assert.Contains(t, r.stderr, n)
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

	// A stale token deletes nothing.
	r = e.run("force-expire", "fx", "-token", stale, "-yes", "-json")
	require.Equal(t, 0, r.code, r.stderr)
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

	r = e.runIn("yes\n", "force-expire", "fx")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "deleted on 5 of 5")
	assert.Empty(t, e.keys("lock:fx"))
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
	assert.Equal(t, 3, e.run("acquire", "shared").code, "a redsync-shaped lock blocks redlock acquire")
	ok, err := mu.Unlock()
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, 0, e.run("acquire", "shared", "-ttl", "1s").code)
}

func TestUsageErrors(t *testing.T) {
	e := newEnv(t)
	bad := filepath.Join(t.TempDir(), "bad.hcl")
	require.NoError(t, os.WriteFile(bad, []byte("cluster \"x\" {\n  ttl = \"30\"\n}\n"), 0o600))
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"acquire"}, "missing lock NAME"},
		{[]string{"acquire", "x", "-bogus"}, "-bogus"},
		{[]string{"acquire", "x", "-ttl", "0s"}, "-ttl must be positive"},
		{[]string{"acquire", "x", "-ttl", "1h"}, "max_ttl"},
		{[]string{"acquire", "x", "-wait", "-1s"}, "-wait"},
		{[]string{"acquire", "x:fence"}, "reserved suffix"},
		{[]string{"extend", "x"}, "missing token"},
		{[]string{"release", "x"}, "missing token"},
		{[]string{"run", "x"}, "missing CMD"},
		{[]string{"run", "x", "-grace", "-1s", "--", "true"}, "-grace"},
		{[]string{"locks", "extra"}, "unexpected argument"},
		{[]string{"watch", "-interval", "0s"}, "-interval"},
		{[]string{"acquire", "x", "-config", bad}, "bad.hcl"},
		{[]string{"acquire", "x", "-config", filepath.Join(t.TempDir(), "missing.hcl")}, "missing.hcl"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := e.run(tt.args...)
			assert.Equal(t, 2, r.code, r.stderr)
			assert.Contains(t, r.stderr, tt.want)
			assert.Empty(t, e.keys("lock:x"), "nothing locked")
			if !strings.HasSuffix(tt.want, ".hcl") {
				// The reason and where the usage is, never the whole help.
				assert.Equal(t, 2, strings.Count(r.stderr, "\n"), r.stderr)
				assert.True(t, strings.HasSuffix(r.stderr, "\nrun 'redlock "+tt.args[0]+" -h' for usage\n"), r.stderr)
			}
		})
	}
	for _, name := range []string{"acquire", "extend", "release", "run", "locks", "force-expire", "watch"} {
		r := e.run("help", name)
		assert.Equal(t, 0, r.code)
		assert.Contains(t, r.stdout, "Exit codes", name)
	}
}

func TestWatchJSONLines(t *testing.T) {
	e := newEnv(t)
	require.Equal(t, 0, e.run("acquire", "watched", "-ttl", "8s").code)
	cmd := e.command("", "watch", "-interval", "200ms", "-json")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for i := 0; i < 2; i++ {
		require.True(t, sc.Scan(), "line %d", i)
		var snap struct {
			Healthy int `json:"healthy"`
			Nodes   []struct {
				Master string `json:"master"`
				State  string `json:"state"`
			} `json:"nodes"`
			Locks []struct {
				Name  string `json:"name"`
				State string `json:"state"`
			} `json:"locks"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &snap), sc.Text())
		assert.Len(t, snap.Nodes, 5)
		assert.Equal(t, "up", snap.Nodes[0].State)
		require.Len(t, snap.Locks, 1)
		assert.Equal(t, "watched", snap.Locks[0].Name)
		assert.Equal(t, "held", snap.Locks[0].State)
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	assert.NoError(t, cmd.Wait(), "Ctrl-C ends watch with 0")
}

// Issue 23 item 8: with 3 of 5 masters killed, `locks` printed its multi-line
// error with literal \n between the lines, and `nodes` said "unreachable:
// unreachable:". Each line of the error is its own line; each finding says its
// code once.
func TestQuorumLostMessagesAreReadable(t *testing.T) {
	e := newEnv(t)
	e.acquireToken("held", "-ttl", "9s")
	for _, s := range e.c.Servers[2:] {
		s.Kill()
	}
	r := e.run("locks")
	assert.Equal(t, 1, r.code, r.stderr)
	assert.NotContains(t, r.stderr, `\n`, "no literal \\n")
	assert.Contains(t, r.stderr, "2 of 5 masters answered (quorum 3)\n")
	assert.GreaterOrEqual(t, strings.Count(r.stderr, "\n"), 4, "one line per master that did not answer: %s", r.stderr)

	r = e.run("nodes")
	assert.Equal(t, 1, r.code, r.stderr)
	assert.NotContains(t, r.stdout, "unreachable: unreachable:")
	assert.Contains(t, r.stdout, "error   unreachable: dial tcp")
	assert.Contains(t, r.stdout, "BELOW QUORUM")

	// Under -json: one document each, the partial listing and the health.
	r = e.run("locks", "-json")
	assert.Equal(t, 1, r.code, r.stderr)
	doc := checkDoc(t, "locks", r.stdout)
	assert.Contains(t, doc["error"], "2 of 5 masters answered")
	r = e.run("nodes", "-json")
	assert.Equal(t, 1, r.code, r.stderr)
	doc = checkDoc(t, "nodes", r.stdout)
	assert.Equal(t, false, doc["ok"])
}

// Issue 23 item 16: watch without -json printed JSON anyway, and each line
// repeated every finding's text per master. Without -json it prints one short
// human line a snapshot; with -json each finding's text appears once a line.
func TestWatchHumanAndFindingsOnce(t *testing.T) {
	e := newEnv(t)
	e.acquireToken("watched", "-ttl", "8s")
	lines := func(args ...string) []string {
		cmd := e.command("", append([]string{"watch", "-interval", "100ms"}, args...)...)
		var out syncBuffer
		cmd.Stdout = &out
		require.NoError(t, cmd.Start())
		require.Eventually(t, func() bool { return strings.Count(out.String(), "\n") >= 2 }, 10*time.Second, 20*time.Millisecond)
		require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
		assert.NoError(t, cmd.Wait())
		return strings.Split(strings.TrimSpace(out.String()), "\n")
	}
	human := lines()
	assert.Regexp(t, `^\d\d:\d\d:\d\d  5/5 masters healthy \(quorum 3\)  locks: 1 held, 0 partial`, human[0])
	assert.NotContains(t, human[0], "{")
	for _, l := range lines("-json") {
		var snap struct {
			Findings []struct {
				Code    string   `json:"code"`
				Summary string   `json:"summary"`
				Masters []string `json:"masters"`
			} `json:"findings"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &snap), l)
		require.NotEmpty(t, snap.Findings)
		for _, f := range snap.Findings {
			assert.Equal(t, 1, strings.Count(l, f.Summary), "%s: its text once a line", f.Code)
			assert.Len(t, f.Masters, 5, f.Code)
		}
	}
}
