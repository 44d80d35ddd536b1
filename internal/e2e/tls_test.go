package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// newTLSEnv is three TLS-only masters and a topology file whose masters carry
// tls { ca_file, server_name } blocks; caFile is the CA the file names, as a path
// relative to the file.
func newTLSEnv(t *testing.T, caPEM func(c *redistest.Cluster) []byte) *env {
	t.Helper()
	c := redistest.Start(t, 3, redistest.Options{TLS: true})
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "certs"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "certs", "ca.pem"), caPEM(c), 0o600))
	var b strings.Builder
	b.WriteString(`cluster "e2e-tls" {
  key_prefix   = "lock:"
  ttl          = "3s"
  max_ttl      = "10s"
  node_timeout = "250ms"
  # brand-new throwaway masters started by the test
  restart_quarantine = false
  retry {
    attempts = 2
    delay    = "50ms"
    jitter   = "20ms"
  }
`)
	for _, s := range c.Servers {
		fmt.Fprintf(&b, `  master %q {
    address = %q
    tls {
      ca_file     = "certs/ca.pem"
      server_name = %q
    }
  }
`, s.Name, s.Addr(), s.TLS.ServerName)
	}
	b.WriteString("}\n")
	path := filepath.Join(dir, "redlock.hcl")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))
	return &env{t: t, c: c, config: path}
}

func TestTLSAcquireExtendRelease(t *testing.T) {
	e := newTLSEnv(t, func(c *redistest.Cluster) []byte {
		b, err := os.ReadFile(c.Servers[0].TLS.CAFile)
		require.NoError(t, err)
		return b
	})
	first := e.run("acquire", "job", "-ttl", "5s")
	require.Equal(t, 0, first.code, first.stderr)
	token := strings.TrimSpace(first.stdout)
	require.NotEmpty(t, token)
	got := e.keys("lock:job")
	require.Len(t, got, 3)
	for name, v := range got {
		assert.Equal(t, token, v, "master %s", name)
	}

	steps := []struct {
		name string
		args []string
		code int
	}{
		{"acquire again is held", []string{"acquire", "job", "-wait", "0"}, 3},
		{"extend with the token", []string{"extend", "job", "-token", token, "-ttl", "5s"}, 0},
		{"release", []string{"release", "job", "-token", token}, 0},
		{"extend after release is lost", []string{"extend", "job", "-token", token}, 4},
	}
	for _, st := range steps {
		r := e.run(st.args...)
		assert.Equal(t, st.code, r.code, "%s: stdout %q stderr %q", st.name, r.stdout, r.stderr)
	}
	assert.Empty(t, e.keys("lock:job"), "nothing left after release")
}

func TestTLSWrongCAFailsNamingTheMasters(t *testing.T) {
	e := newTLSEnv(t, func(*redistest.Cluster) []byte {
		other, err := redistest.NewTLSFiles(t.TempDir())
		require.NoError(t, err)
		b, err := os.ReadFile(other.CAFile)
		require.NoError(t, err)
		return b
	})
	r := e.run("acquire", "job", "-ttl", "5s")
	assert.Equal(t, 1, r.code, "an unreachable quorum is an error, not \"held\": stdout %q stderr %q", r.stdout, r.stderr)
	assert.Empty(t, strings.TrimSpace(r.stdout), "no token printed")
	for _, s := range e.c.Servers {
		assert.Regexp(t, `\b`+s.Name+` \((tls handshake: )?tls: failed to verify certificate: x509: certificate signed by unknown authority`,
			r.stderr, "stderr names master %s and the certificate problem", s.Name)
	}
	assert.Empty(t, e.keys("lock:job"), "nothing left locked")
}
