package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withPrefix writes a copy of e's topology file with another key_prefix line (an
// HCL string literal) and returns its path.
func (e *env) withPrefix(literal string) string {
	e.t.Helper()
	src, err := os.ReadFile(e.config)
	require.NoError(e.t, err)
	text := strings.Replace(string(src), `key_prefix   = "lock:"`, "key_prefix   = "+literal, 1)
	path := filepath.Join(e.t.TempDir(), "prefix.hcl")
	require.NoError(e.t, os.WriteFile(path, []byte(text), 0o600))
	return path
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
	assert.Contains(t, r.stdout, `back\\slash:job: deleted`)
}
