package health

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/hcl"
	"github.com/redlock/redlock/internal/connect"
	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/topology"
)

// loadTLSTopology writes a topology file naming the TLS masters of c, with the CA
// copied next to it and given by a relative ca_file, and each master's tls block
// built by tlsBlock; it returns the loaded cluster.
func loadTLSTopology(t *testing.T, c *redistest.Cluster, tlsBlock func(s *redistest.Server) string) *topology.Cluster {
	t.Helper()
	dir := t.TempDir()
	ca, err := os.ReadFile(c.Servers[0].TLS.CAFile)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "certs"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "certs", "ca.pem"), ca, 0o600))
	var b strings.Builder
	b.WriteString(`cluster "tls" {
  node_timeout       = "500ms"
  restart_quarantine = false
  settings {
    maxmemory_policy = "noeviction"
  }
`)
	for _, s := range c.Servers {
		fmt.Fprintf(&b, "  master %q {\n    address = %q\n    tls {\n%s    }\n  }\n", s.Name, s.Addr(), tlsBlock(s))
	}
	b.WriteString("}\n")
	path := filepath.Join(dir, "redlock.hcl")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))
	cfg, diags := hcl.LoadFile(path, hcl.Options{Getenv: func(string) string { return "" }})
	require.False(t, diags.HasErrors(), "%s", diags.Error())
	require.NotNil(t, cfg.Cluster)
	return cfg.Cluster
}

// TestProbeOverTLS probes TLS masters declared with tls { ca_file, server_name }
// (and without server_name, where the address's IP is verified), and takes a lock
// through connect.Manager over the same topology.
func TestProbeOverTLS(t *testing.T) {
	c := redistest.Start(t, 3, redistest.Options{TLS: true, Args: safeArgs})
	tests := []struct {
		name  string
		block func(s *redistest.Server) string
		up    bool
		err   string
	}{
		{
			name: "ca_file and server_name",
			block: func(s *redistest.Server) string {
				return "      ca_file     = \"certs/ca.pem\"\n      server_name = \"" + s.TLS.ServerName + "\"\n"
			},
			up: true,
		},
		{
			name:  "ca_file only: the address is verified",
			block: func(*redistest.Server) string { return "      ca_file = \"certs/ca.pem\"\n" },
			up:    true,
		},
		{
			name: "server_name not in the certificate",
			block: func(*redistest.Server) string {
				return "      ca_file     = \"certs/ca.pem\"\n      server_name = \"redis.example\"\n"
			},
			err: "certificate is valid for localhost, not redis.example",
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl := loadTLSTopology(t, c, tt.block)
			for _, m := range cl.Masters {
				require.NotNil(t, m.TLS, "master %s", m.Name)
				assert.True(t, filepath.IsAbs(m.TLS.CAFile), "ca_file resolved against the file's directory: %s", m.TLS.CAFile)
			}
			p, err := NewProber(cl)
			require.NoError(t, err)
			defer p.Close()
			hs := p.Probe(ctx)
			require.Len(t, hs, 3)
			for i, h := range hs {
				assert.Equal(t, c.Servers[i].Name, h.Master)
				if !tt.up {
					assert.False(t, h.Healthy(time.Now()), "master %s", h.Master)
					assert.Contains(t, h.Error, tt.err, "master %s", h.Master)
					continue
				}
				assert.True(t, h.Reachable, "master %s: %s", h.Master, h.Error)
				assert.Empty(t, h.Error, "master %s", h.Master)
				assert.NotEmpty(t, h.RunID, "master %s: INFO read over TLS", h.Master)
				assert.Equal(t, "noeviction", h.Config["maxmemory-policy"], "master %s: CONFIG GET over TLS", h.Master)
				assert.Equal(t, topology.StateUp, h.State(time.Now()), "master %s: %+v", h.Master, h.Findings)
			}

			m, err := connect.Manager(cl)
			require.NoError(t, err)
			defer m.Close()
			l, err := m.TryAcquire(ctx, "tls-probe", 5*time.Second)
			if !tt.up {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, 3, l.Votes().Votes)
			require.NoError(t, l.Release(ctx))
			for _, s := range c.Servers {
				assert.Empty(t, s.Keys(ctx), "master %s", s.Name)
			}
		})
	}
}
