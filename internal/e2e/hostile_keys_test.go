package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// variant writes a copy of e's topology file, named file, with each (old, new)
// pair of oldNew replaced once, and returns its path.
func (e *env) variant(file string, oldNew ...string) string {
	e.t.Helper()
	src, err := os.ReadFile(e.config)
	require.NoError(e.t, err)
	text := string(src)
	for i := 0; i+1 < len(oldNew); i += 2 {
		require.Contains(e.t, text, oldNew[i])
		text = strings.Replace(text, oldNew[i], oldNew[i+1], 1)
	}
	path := filepath.Join(e.t.TempDir(), file)
	require.NoError(e.t, os.WriteFile(path, []byte(text), 0o600))
	return path
}

// withPrefix is e's file with another key_prefix (an HCL string literal).
func (e *env) withPrefix(literal string) string {
	return e.variant("prefix.hcl", `key_prefix   = "lock:"`, "key_prefix   = "+literal)
}

// Regression (issue 23 item 11): a key_prefix with control characters passed
// validate, and acquire/extend printed the key raw.
func TestKeyPrefixControlCharactersAreRefused(t *testing.T) {
	e := newEnv(t)
	cfg := e.withPrefix(`"lock\u001b]0;owned\u0007:"`)
	for _, cmd := range []string{"validate", "acquire"} {
		args := []string{cmd, "-config", cfg}
		if cmd == "acquire" {
			args = append(args, "job")
		}
		r := e.run(args...)
		assert.Equal(t, 2, r.code, "%s: %s%s", cmd, r.stdout, r.stderr)
		assert.Contains(t, r.stdout+r.stderr, "Control character in key prefix")
		assert.Contains(t, r.stdout+r.stderr, "prefix.hcl line 2")
		assert.NotContains(t, r.stdout+r.stderr, "\x1b", "%s: the escape sequence never reaches the terminal", cmd)
	}

	// Printable but escaped characters: acquire and extend escape the key as release does.
	cfg = e.withPrefix(`"back\\slash:"`)
	r := e.run("acquire", "job", "-config", cfg, "-ttl", "5s")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, `acquired back\\slash:job (`)
	tok := strings.TrimSpace(r.stdout)
	r = e.run("extend", "job", "-config", cfg, "-token", tok)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, `extended back\\slash:job (`)
	r = e.run("release", "job", "-config", cfg, "-token", tok)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, `back\\slash:job: deleted`)
}

// Regression (issue 23 item 12): a foreign lock whose name breaks this tool's name
// rule (`lock:nightly report`, written by another library) was listed by locks but
// could not be force-expired ("invalid lock name: whitespace"). acquire keeps the rule.
func TestForceExpireAForeignKeyAsListed(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, s := range e.c.Servers[:4] {
		require.NoError(t, s.Client().Set(ctx, "lock:nightly report", "other-library-value", 9*time.Second).Err())
	}
	r := e.run("locks")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "nightly report")

	r = e.run("acquire", "nightly report")
	assert.Equal(t, 2, r.code, "acquire keeps the name rule: %s", r.stderr)
	assert.Contains(t, r.stderr, "whitespace")

	// Prompted: it shows the lock and deletes what it showed.
	r = e.runIn("yes\n", "force-expire", "nightly report", "-now")
	require.Equal(t, 0, r.code, "%s%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "lock:nightly report is")
	assert.Empty(t, e.keys("lock:nightly report"), "deleted on every master")

	// With -token: compare-and-delete, a foreign value is kept.
	for _, s := range e.c.Servers[:3] {
		require.NoError(t, s.Client().Set(ctx, "lock:nightly report", "v2", 9*time.Second).Err())
	}
	r = e.run("force-expire", "nightly report", "-yes", "-now", "-token", "not-the-value")
	assert.Len(t, e.keys("lock:nightly report"), 3, "a value other than the token is kept: %s%s", r.stdout, r.stderr)
	r = e.run("force-expire", "nightly report", "-yes", "-now", "-token", "v2")
	require.Equal(t, 0, r.code, "%s%s", r.stdout, r.stderr)
	assert.Empty(t, e.keys("lock:nightly report"))

	// The reserved suffixes stay refused: a fence counter is not a lock.
	r = e.run("force-expire", "job:fence", "-yes", "-now")
	assert.Equal(t, 2, r.code, r.stderr)
}

// Regression (issue 23 item 12): a foreign key with control characters is listed
// escaped; force-expire takes the name exactly as locks shows it.
func TestForceExpireAKeyByItsEscapedName(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, s := range e.c.Servers[:3] {
		require.NoError(t, s.Client().Set(ctx, "lock:x\x1b]0;owned\x07", "foreign", 9*time.Second).Err())
	}
	r := e.run("locks")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, `x\x1b]0;owned\a`)
	assert.NotContains(t, r.stdout, "\x1b")
	r = e.run("force-expire", `x\x1b]0;owned\a`, "-yes", "-now")
	require.Equal(t, 0, r.code, "%s%s", r.stdout, r.stderr)
	assert.NotContains(t, r.stdout+r.stderr, "\x1b")
	assert.Empty(t, e.keys("lock:x\x1b]0;owned\x07"), "deleted on every master")
}
