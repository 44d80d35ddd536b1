package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// Regression tests found by attacking the CLI as a careless or hostile user.

// runCLIIn is runCLI with stdin.
func runCLIIn(t *testing.T, env map[string]string, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] }}
	code = Main(context.Background(), e, args)
	return code, out.String(), errb.String()
}

// attackMasters starts two real masters and names a third, closed, loopback port:
// a master that does not answer.
func attackMasters(t *testing.T) (masters, down string) {
	t.Helper()
	c := redistest.Start(t, 2, redistest.Options{})
	down = "127.0.0.1:" + strconv.Itoa(redistest.FreePort(t))
	return strings.Join(append(c.Addrs(), down), ","), down
}

// force-expire reported a master that did not answer when the lock was read as
// "missing (nothing to delete)" and exited 0: a script that breaks a stuck lock
// with `force-expire NAME -yes` believed it gone while that master still held it
// (the README: exit 1 when some master did not answer).
func TestAttackForceExpireUnreachableMasterIsNotMissing(t *testing.T) {
	masters, down := attackMasters(t)
	env := map[string]string{"REDLOCK_MASTERS": masters, "REDLOCK_TIMEOUT": "2s"}
	code, _, stderr := runCLI(t, env, "acquire", "stuck", "-ttl", "30s")
	require.Equal(t, ExitOK, code, stderr)

	code, stdout, stderr := runCLI(t, env, "force-expire", "stuck", "-yes")
	assert.Equal(t, ExitError, code, "a master did not answer: %s%s", stdout, stderr)
	for _, line := range strings.Split(stdout, "\n") {
		if strings.Contains(line, down) {
			assert.NotContains(t, line, "missing", "the master that did not answer is not 'missing'")
			assert.Contains(t, line, "error")
		}
	}

	// Every master down: nothing was deleted anywhere, and it must not say "done".
	env["REDLOCK_MASTERS"] = down + ",127.0.0.1:" + strconv.Itoa(redistest.FreePort(t)) + ",127.0.0.1:" + strconv.Itoa(redistest.FreePort(t))
	code, stdout, stderr = runCLI(t, env, "force-expire", "stuck", "-yes", "-json")
	assert.Equal(t, ExitError, code, "no master answered: %s%s", stdout, stderr)
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc), stdout)
	assert.NotEmpty(t, doc["error"], "the JSON document says what failed")
}

// force-expire printed "no master answered (0 of 0): nothing can be listed" under
// the lock it had just shown, read from every master.
func TestAttackForceExpireShowHasNoSpuriousNoAnswerLine(t *testing.T) {
	c := redistest.Start(t, 3, redistest.Options{})
	env := map[string]string{"REDLOCK_MASTERS": strings.Join(c.Addrs(), ",")}
	code, _, stderr := runCLI(t, env, "acquire", "shown", "-ttl", "30s")
	require.Equal(t, ExitOK, code, stderr)
	code, stdout, stderr := runCLI(t, env, "force-expire", "shown", "-yes")
	require.Equal(t, ExitRevoked, code, stdout+stderr)
	assert.Contains(t, stderr, "holder:")
	assert.NotContains(t, stderr, "no master answered", "every master answered")
}

// run accepted a -conflict-exit-code equal to one of its own codes: with
// -conflict-exit-code 4 "not acquired" and "lost while the command ran" were the
// same exit status, which is what the flag exists to prevent.
func TestAttackConflictExitCodeCannotBeOneOfRunsOwnCodes(t *testing.T) {
	for _, n := range []int{ExitError, ExitUsage, ExitLost, ExitCapped, 126, 127} {
		code, _, stderr := runCLI(t, nil, "run", "x", "-masters", "127.0.0.1:1", "-conflict-exit-code", strconv.Itoa(n), "--", "true")
		assert.Equal(t, ExitUsage, code, "-conflict-exit-code %d: %s", n, stderr)
		assert.Contains(t, stderr, "-conflict-exit-code", "-conflict-exit-code %d", n)
	}
}

// An address written with credentials but without the redis:// scheme
// ("user:pw@host:port", as in a URL with the scheme forgotten) put the password
// in every message: the error and its snippet, and, for "pw@host:port", which
// passed as host:port, every command's output (nodes, locks, -json, plan).
func TestAttackCredentialsInAddressWithoutSchemeAreSecret(t *testing.T) {
	const pw = "s3cr3tpw"
	file := writeFile(t, t.TempDir(), "redlock.hcl", `cluster "x" {
  master "a" { address = "user:`+pw+`@127.0.0.1:7001" }
  master "b" { address = "127.0.0.1:7002" }
  master "c" { address = "127.0.0.1:7003" }
}
`)
	noTraffic := "127.0.0.1:7002,127.0.0.1:7003"
	tests := [][]string{
		{"validate", "-config", file},
		{"validate", "-json", "-config", file},
		{"validate", "-masters", "user:" + pw + "@127.0.0.1:7001," + noTraffic},
		{"validate", "-masters", ":" + pw + "@127.0.0.1:7001," + noTraffic},
		{"validate", "-json", "-masters", pw + "@127.0.0.1:7001," + noTraffic},
		{"validate", "-masters", pw + "@127.0.0.1:7001," + noTraffic},
	}
	for _, args := range tests {
		code, stdout, stderr := runCLI(t, nil, args...)
		assert.NotEqual(t, ExitOK, code, "%v: credentials without a URL are refused: %s%s", args, stdout, stderr)
		assert.NotContains(t, stdout+stderr, pw, "%v", args)
		assert.NotContains(t, stdout+stderr, "cr3t", "%v", args)
	}
}

// fmt on a symlink (redlock.hcl -> ../shared/redlock.hcl, a common layout)
// replaced the link with a formatted copy: the link was gone and the shared file
// it pointed to stayed unformatted.
func TestAttackFmtWritesThroughASymlink(t *testing.T) {
	dir := t.TempDir()
	real := writeFile(t, dir, "real.hcl", "cluster \"x\" {\nmaster \"a\" {address=\"127.0.0.1:1\"}\n}\n")
	link := filepath.Join(dir, "link.hcl")
	require.NoError(t, os.Symlink("real.hcl", link))
	code, stdout, stderr := runCLI(t, nil, "fmt", link)
	require.Equal(t, ExitOK, code, stdout+stderr)
	st, err := os.Lstat(link)
	require.NoError(t, err)
	assert.NotZero(t, st.Mode()&os.ModeSymlink, "the link is still a link")
	b, err := os.ReadFile(real)
	require.NoError(t, err)
	assert.Contains(t, string(b), `address = "127.0.0.1:1"`, "the file the link points to was formatted")
}

// runCLIBlockedStdin runs args with a stdin that never gives a line (a terminal
// where nobody types) and cancels the context after a moment, as main does on
// SIGINT/SIGTERM. It returns the exit code, or fails when the command hung.
func runCLIBlockedStdin(t *testing.T, env map[string]string, args ...string) (int, string) {
	t.Helper()
	pr, pw := io.Pipe()
	t.Cleanup(func() { _ = pw.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb syncBuffer
	e := &Env{Stdin: pr, Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] }}
	done := make(chan int, 1)
	go func() { done <- Main(ctx, e, args) }()
	time.Sleep(300 * time.Millisecond)
	cancel()
	select {
	case code := <-done:
		return code, out.String() + errb.String()
	case <-time.After(3 * time.Second):
		t.Fatalf("%v: Ctrl-C (the context cancelled) did not end the command while it read stdin: %s", args, errb.String())
		return 0, ""
	}
}

// syncBuffer is a bytes.Buffer safe for the command's goroutine and the test's.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Ctrl-C (and SIGTERM) at force-expire's "Type yes" prompt, or while `-token -`
// waited for a token on a terminal, did nothing: main turns the signal into a
// cancelled context, and the read of stdin never looked at it. The command hung
// until a line or EOF came.
func TestAttackCtrlCEndsAStdinRead(t *testing.T) {
	code, out := runCLIBlockedStdin(t, nil, "release", "x", "-masters", "127.0.0.1:1", "-token", "-")
	assert.Equal(t, ExitError, code, out)

	c := redistest.Start(t, 3, redistest.Options{})
	env := map[string]string{"REDLOCK_MASTERS": strings.Join(c.Addrs(), ",")}
	code, out, _ = runCLI(t, env, "acquire", "prompted", "-ttl", "30s")
	require.Equal(t, ExitOK, code, out)
	code, out = runCLIBlockedStdin(t, env, "force-expire", "prompted")
	assert.Equal(t, ExitError, code, out)
	for _, s := range c.Servers {
		assert.NotEmpty(t, s.Keys(context.Background()), "interrupted at the prompt: nothing deleted")
	}
}

// force-expire -json printed nothing on stdout when the answer at the prompt was
// not "yes": the README says a command that fails under -json still prints one
// document with "error".
func TestAttackForceExpireJSONAbortedPrintsADocument(t *testing.T) {
	c := redistest.Start(t, 3, redistest.Options{})
	env := map[string]string{"REDLOCK_MASTERS": strings.Join(c.Addrs(), ",")}
	code, out, _ := runCLI(t, env, "acquire", "kept", "-ttl", "30s")
	require.Equal(t, ExitOK, code, out)
	code, stdout, stderr := runCLIIn(t, env, "no\n", "force-expire", "kept", "-json")
	assert.Equal(t, ExitError, code, stderr)
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc), "stdout: %q", stdout)
	assert.Equal(t, formatVersion, doc["format_version"])
	assert.Equal(t, "kept", doc["name"])
	assert.Equal(t, float64(0), doc["deleted"])
	assert.NotEmpty(t, doc["error"])
}

// validate printed the source snippet under a diagnostic raw: a topology file
// from a repository (another user's commit) with an escape sequence in a comment
// on the faulty line cleared the screen, set the clipboard (OSC 52) or reversed
// the text (U+202E) of whoever ran validate.
func TestAttackDiagnosticSnippetIsEscaped(t *testing.T) {
	file := writeFile(t, t.TempDir(), "redlock.hcl", "cluster \"x\" {\n  ttl = \"bad\" # \x1b]52;c;SGk=\x07 \x1b[2J \u202e \u0085\n"+
		"  master \"a\" { address = \"127.0.0.1:7001\" }\n  master \"b\" { address = \"127.0.0.1:7002\" }\n  master \"c\" { address = \"127.0.0.1:7003\" }\n}\n")
	code, stdout, stderr := runCLI(t, nil, "validate", "-config", file)
	assert.Equal(t, ExitInvalid, code)
	all := stdout + stderr
	assert.Contains(t, all, `ttl = "bad"`, "the snippet is still shown")
	assert.NotContains(t, all, "\x1b", "no raw ESC")
	assert.NotContains(t, all, "\x07", "no raw BEL")
	assert.NotContains(t, all, "\u202e", "no raw bidi override")
	assert.NotContains(t, all, "\u0085", "no raw C1 control")
}

// With REDLOCK_MASTERS exported (as the README suggests for one-off debugging),
// `-config FILE` on the command line was a usage error, "-masters and -config are
// exclusive", although no -masters was given: a flag on the command line wins
// over the environment variable that stands for another.
func TestAttackConfigFlagWinsOverMastersEnv(t *testing.T) {
	file := writeFile(t, t.TempDir(), "redlock.hcl", goodTopology)
	env := map[string]string{"REDLOCK_MASTERS": "127.0.0.1:7101,127.0.0.1:7102,127.0.0.1:7103"}
	code, stdout, stderr := runCLI(t, env, "validate", "-config", file)
	assert.Equal(t, ExitOK, code, stdout+stderr)
	assert.Contains(t, stdout+stderr, file+" is valid")
	// Both on the command line: still exclusive.
	code, _, stderr = runCLI(t, nil, "validate", "-config", file, "-masters", "127.0.0.1:7101")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, stderr, "exclusive")
}

// "one lock NAME expected, got 2 arguments (...)" printed the arguments raw: a
// name taken from another user's lock (xargs over `locks -json`) put its escape
// sequences on the terminal, where every other path escapes them.
func TestAttackExtraArgumentsAreEscaped(t *testing.T) {
	// force-expire takes one NAME (release now takes several, each checked as a name).
	code, _, stderr := runCLI(t, nil, "force-expire", "a", "\x1b]52;c;SGk=\x07\x1b[2J", "-token", "t", "-masters", "127.0.0.1:1")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, stderr, "one lock NAME expected")
	assert.NotContains(t, stderr, "\x1b")
	assert.NotContains(t, stderr, "\x07")
	// release takes several names: the hostile one is refused as a name, escaped.
	code, _, stderr = runCLI(t, nil, "release", "a", "\x1b]52;c;SGk=\x07\x1b[2J", "-token", "t", "-masters", "127.0.0.1:1")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, stderr, "invalid lock name")
	assert.NotContains(t, stderr, "\x1b")
	assert.NotContains(t, stderr, "\x07")
}

// `fmt -` reading a terminal did not end on Ctrl-C either (as the prompts).
func TestAttackCtrlCEndsFmtStdin(t *testing.T) {
	code, out := runCLIBlockedStdin(t, nil, "fmt", "-")
	assert.NotEqual(t, ExitOK, code, out)
}

// The largest -wait and -timeout add up to more than a time.Duration holds: the
// sum saturates instead of wrapping to a deadline in the past.
func TestAttackHugeWaitDoesNotOverflow(t *testing.T) {
	assert.Equal(t, time.Duration(math.MaxInt64), addSat(2562047*time.Hour, 2562047*time.Hour))
	assert.Equal(t, 3*time.Second, addSat(time.Second, 2*time.Second))
}
