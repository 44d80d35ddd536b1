// Package e2e runs the built redlock binary against five real redis-server masters:
// the lock commands' exit codes, output and clean-up, as scripts see them.
package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	// After the build (go's build cache is under it too): the commands remember
	// in the user's cache which file warnings they showed, and the tests'
	// commands use a cache of their own.
	if err := os.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache")); err != nil {
		fmt.Fprintln(os.Stderr, err)
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
