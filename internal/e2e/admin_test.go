package e2e

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// acquireToken takes name with the CLI and returns its token.
func (e *env) acquireToken(name string, args ...string) string {
	e.t.Helper()
	r := e.run(append([]string{"acquire", name}, args...)...)
	require.Equal(e.t, 0, r.code, r.stderr)
	return strings.TrimSpace(r.stdout)
}

// force-expire shows alice's lock and waits for "yes"; meanwhile alice releases and
// bob acquires. It must delete nothing of bob's, say who holds it now, and exit 1.
func TestForceExpireDeletesOnlyWhatItShowed(t *testing.T) {
	e := newEnv(t)
	alice := e.acquireToken("shown", "-owner", "alice", "-ttl", "9s")
	cmd := e.command("", "force-expire", "shown")
	cmd.Stdin = nil
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	var errb syncBuffer
	cmd.Stderr = &errb
	require.NoError(t, cmd.Start())
	require.Eventually(t, func() bool { return strings.Contains(errb.String(), "Type yes") }, 10*time.Second, 10*time.Millisecond)
	assert.Contains(t, errb.String(), "alice")
	r := e.run("release", "shown", "-token", alice)
	require.Equal(t, 0, r.code, r.stderr)
	bob := e.acquireToken("shown", "-owner", "bob", "-ttl", "9s")
	_, err = io.WriteString(stdin, "yes\n")
	require.NoError(t, err)
	require.NoError(t, stdin.Close())
	err = cmd.Wait()
	require.Error(t, err)
	assert.Equal(t, 1, cmd.ProcessState.ExitCode(), errb.String())
	assert.Contains(t, errb.String(), "changed hands since it was shown")
	assert.Contains(t, errb.String(), "bob")
	for master, v := range e.keys("lock:shown") {
		assert.Equal(t, bob, v, "bob's lock on %s is intact", master)
	}
	assert.Len(t, e.keys("lock:shown"), 5)
}

// syncBuffer is a bytes.Buffer safe for a writer goroutine and a reader.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestReleaseOfAnotherOwnersLockExits4(t *testing.T) {
	e := newEnv(t)
	mine := e.acquireToken("expired", "-ttl", "200ms")
	time.Sleep(300 * time.Millisecond)
	theirs := e.acquireToken("expired", "-ttl", "9s")
	r := e.run("release", "expired", "-token", mine)
	assert.Equal(t, 4, r.code, r.stderr)
	assert.Contains(t, r.stderr, "another owner or its revocation holds it")
	assert.Len(t, e.keys("lock:expired"), 5)
	for _, v := range e.keys("lock:expired") {
		assert.Equal(t, theirs, v)
	}
	// Gone (expired, nobody else): 0.
	gone := e.acquireToken("gone", "-ttl", "100ms")
	time.Sleep(200 * time.Millisecond)
	r = e.run("release", "gone", "-token", gone)
	assert.Equal(t, 0, r.code, r.stderr)
}

// extend without -ttl keeps the TTL the lock was taken with, not the cluster's.
func TestExtendDefaultsToTheTTLTheLockWasTakenWith(t *testing.T) {
	e := newEnv(t)
	tok := e.acquireToken("sixty", "-ttl", "9s") // the cluster's ttl is 3s
	time.Sleep(100 * time.Millisecond)
	r := e.run("extend", "sixty", "-token", tok, "-json")
	require.Equal(t, 0, r.code, r.stderr)
	for _, s := range e.c.Servers {
		pttl := s.Client().PTTL(t.Context(), "lock:sixty").Val()
		assert.Greater(t, pttl, 8*time.Second, "master %s", s.Name)
	}
}

// A token need not be on the command line, where ps shows it to every local user.
func TestTokenSources(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name  string
		args  func(tok, file string) []string
		stdin func(tok string) string
		env   func(tok string) []string
	}{
		{"-token-file", func(_, file string) []string { return []string{"-token-file", file} }, nil, nil},
		{"-token - (stdin)", func(string, string) []string { return []string{"-token", "-"} }, func(tok string) string { return tok + "\n" }, nil},
		{"REDLOCK_TOKEN", func(string, string) []string { return nil }, nil, func(tok string) []string { return []string{"REDLOCK_TOKEN=" + tok} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok := e.acquireToken("tok")
			file := filepath.Join(t.TempDir(), "token")
			require.NoError(t, os.WriteFile(file, []byte(tok+"\n"), 0o600))
			for _, verb := range []string{"extend", "release"} {
				stdin := ""
				if tt.stdin != nil {
					stdin = tt.stdin(tok)
				}
				cmd := e.command(stdin, append([]string{verb, "tok"}, tt.args(tok, file)...)...)
				if tt.env != nil {
					cmd.Env = append(cmd.Env, tt.env(tok)...)
				}
				var errb bytes.Buffer
				cmd.Stderr = &errb
				require.NoError(t, cmd.Run(), "%s: %s", verb, errb.String())
			}
			assert.Empty(t, e.keys("lock:tok"), "released")
		})
	}
	r := e.run("release", "tok")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "missing token")
	r = e.run("release", "tok", "-token-file", "/nonexistent")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "-token-file")
}

// One lock-name rule: the CLI refuses what the library refuses, naming the problem.
func TestLockNameRule(t *testing.T) {
	e := newEnv(t)
	for _, name := range []string{"has space", "tab\tname", "new\nline", "esc\x1b[2J", strings.Repeat("n", 201), "x:fence"} {
		r := e.run("acquire", name)
		assert.Equal(t, 2, r.code, "%q", name)
		assert.Contains(t, r.stderr, "invalid lock name")
		assert.NotContains(t, r.stderr, "\x1b", "the name is escaped in the message")
	}
}

// Hostile strings from another user never reach the terminal raw.
func TestLocksEscapesHostileStrings(t *testing.T) {
	e := newEnv(t)
	r := e.run("acquire", "hostile", "-owner", "x\x1b[2J\x1b[31mPWNED\u009b", "-ttl", "9s")
	require.Equal(t, 0, r.code, r.stderr)
	for _, s := range e.c.Servers {
		require.NoError(t, s.Client().Set(t.Context(), "lock:evil\x1b]0;title\x07\nname", "v\x1b[2J", time.Minute).Err())
	}
	r = e.run("locks")
	require.Equal(t, 0, r.code, r.stderr)
	for _, bad := range []string{"\x1b", "\u009b", "\x07"} {
		assert.NotContains(t, r.stdout, bad)
		assert.NotContains(t, r.stderr, bad)
	}
	assert.Contains(t, r.stdout, `x\x1b[2J\x1b[31mPWNED`)
	assert.Contains(t, r.stdout, `evil\x1b]0;title\a\nname`)
}

func TestLocksSaysWhenNoMasterAnswered(t *testing.T) {
	e := newEnv(t)
	for _, s := range e.c.Servers {
		s.Kill()
	}
	r := e.run("locks", "-timeout", "2s")
	assert.Contains(t, r.stdout, "no master answered")
	assert.NotContains(t, r.stdout, "no locks match")
}

func TestMessagesAScriptAndAHumanCanUse(t *testing.T) {
	e := newEnv(t)
	e.acquireToken("busy", "-owner", "alice", "-ttl", "9s")
	r := e.run("acquire", "busy", "-wait", "300ms")
	assert.Equal(t, 3, r.code)
	assert.Regexp(t, `busy is held by alice, \S+ pid \d+, since \S+ for [\d.]+s more`, r.stderr)

	tests := []struct {
		args []string
		want string
	}{
		{[]string{"acquire", "x", "-ttl", "10"}, "-ttl 10: a duration needs a unit, e.g. 10s"},
		{[]string{"acquire", "x", "-ttl", "1ms"}, "leaves no validity after the drift budget"},
		{[]string{"acquire", "x", "-ttl", "10.5ms"}, "not a whole number of milliseconds"},
		{[]string{"acquire", "x", "-wait", "abc"}, `-wait abc: not a duration`},
	}
	for _, tt := range tests {
		r := e.run(tt.args...)
		assert.Equal(t, 2, r.code, "%v", tt.args)
		assert.Contains(t, r.stderr, tt.want)
	}
	// "--" ends the flags: a name that starts with "-" is a name.
	r = e.run("acquire", "-ttl", "5s", "--", "-dash")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Len(t, e.keys("lock:-dash"), 5)
}
