package hcl

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/topology"
)

// noEnv is a Getenv that sees no environment, so tests do not depend on the caller's.
func noEnv(string) string { return "" }

func TestDecodedCluster(t *testing.T) {
	src := `
cluster "payments" {
  key_prefix         = "l:"
  ttl                = "10s"
  max_ttl            = "1m"
  node_timeout       = "20ms"
  restart_quarantine = false
  drift {
    factor = 0.02
    extra  = "5ms"
  }
  retry {
    attempts = 3
    delay    = "50ms"
    jitter   = "10ms"
  }
  settings {
    maxmemory_policy = "noeviction"
    appendonly       = true
    appendfsync      = "always"
    hz               = 100
  }
  master "a" {
    address  = "127.0.0.1:7001"
    username = "u"
    db       = 2
    tls {
      ca_file              = "certs/ca.pem"
      cert_file            = "/abs/cert.pem"
      key_file             = "key.pem"
      server_name          = "redis-a"
      insecure_skip_verify = true
    }
  }
  master "b" { address = "127.0.0.1:7002" }
  master "c" { address = "127.0.0.1:7003" }
  lock "billing/*" {
    ttl            = "5s"
    max_extensions = 4
    fair           = true
    fencing        = true
  }
  lock "nightly/*" {
    permits = 3
  }
}
`
	cfg, diags := Load(filepath.Join("conf", "redlock.hcl"), []byte(src), Options{Getenv: noEnv})
	require.Empty(t, diags, diags.Error())
	c := cfg.Cluster
	require.NotNil(t, c)
	assert.Equal(t, "payments", c.Name)
	assert.Equal(t, "l:", c.KeyPrefix)
	assert.Equal(t, 10*time.Second, c.TTL)
	assert.Equal(t, time.Minute, c.MaxTTL)
	assert.Equal(t, 20*time.Millisecond, c.NodeTimeout)
	assert.False(t, c.RestartQuarantine)
	assert.Equal(t, topology.Drift{Factor: 0.02, Extra: 5 * time.Millisecond}, c.Drift)
	assert.Equal(t, topology.Retry{Attempts: 3, Delay: 50 * time.Millisecond, Jitter: 10 * time.Millisecond}, c.Retry)
	assert.Equal(t, []topology.Setting{
		{Name: "maxmemory-policy", Value: "noeviction"},
		{Name: "appendonly", Value: "yes"},
		{Name: "appendfsync", Value: "always"},
		{Name: "hz", Value: "100"},
	}, c.Settings)
	require.Len(t, c.Masters, 3)
	assert.Equal(t, topology.Master{Name: "a", Address: "127.0.0.1:7001", Username: "u", DB: 2, TLS: &topology.TLS{
		CAFile: filepath.Join("conf", "certs", "ca.pem"), CertFile: "/abs/cert.pem", KeyFile: filepath.Join("conf", "key.pem"),
		ServerName: "redis-a", InsecureSkipVerify: true,
	}}, c.Masters[0])
	assert.Nil(t, c.Masters[1].TLS)
	assert.Equal(t, []topology.Policy{{Match: "billing/*", TTL: 5 * time.Second, MaxExtensions: 4, Fair: true, Fencing: true},
		{Match: "nightly/*", Permits: 3}}, c.Locks)
}

func TestDefaults(t *testing.T) {
	src := `cluster "d" {
  master "a" { address = "127.0.0.1:7001" }
  master "b" { address = "127.0.0.1:7002" }
  master "c" { address = "127.0.0.1:7003" }
}`
	cfg, diags := Load("d.hcl", []byte(src), Options{Getenv: noEnv})
	require.Empty(t, diags, diags.Error())
	want := topology.NewCluster("d")
	want.Masters = cfg.Cluster.Masters
	assert.Equal(t, want, cfg.Cluster)
	assert.Equal(t, "lock:", cfg.Cluster.KeyPrefix)
	assert.True(t, cfg.Cluster.RestartQuarantine)
}

func TestLoadFileMissing(t *testing.T) {
	cfg, diags := LoadFile(filepath.Join(t.TempDir(), "nope.hcl"), Options{Getenv: noEnv})
	require.NotNil(t, cfg)
	assert.Nil(t, cfg.Cluster)
	require.True(t, diags.HasErrors())
	assert.Contains(t, diags.Error(), "nope.hcl")
	assert.Contains(t, diags.Error(), "-config")
}

// An address may be a redis:// or rediss:// URL: its user, password (a secret), db
// and TLS fill the master; a sensitive variable is allowed only inside a URL.
func TestAddressURL(t *testing.T) {
	src := `variable "pw" {
  type      = string
  sensitive = true
}
cluster "c" {
  master "a" { address = "rediss://app:${var.pw}@10.0.0.1:6380/3" }
  master "b" { address = "redis://10.0.0.2" }
  master "c" { address = "10.0.0.3:6379" }
}
`
	cfg, diags := Load("t.hcl", []byte(src), Options{Getenv: noEnv, Vars: map[string]string{"pw": "Url-Secret-42"}})
	require.Empty(t, diags)
	a := cfg.Cluster.Masters[0]
	assert.Equal(t, "10.0.0.1:6380", a.Address)
	assert.Equal(t, "app", a.Username)
	assert.Equal(t, "Url-Secret-42", a.Password)
	assert.Equal(t, 3, a.DB)
	assert.NotNil(t, a.TLS)
	assert.Equal(t, "10.0.0.2:6379", cfg.Cluster.Masters[1].Address)
	assert.Equal(t, "(sensitive)", cfg.Redact("Url-Secret-42"))

	bad := strings.Replace(src, `"redis://10.0.0.2"`, `"redis://10.0.0.2:http"`, 1)
	_, diags = Load("t.hcl", []byte(bad), Options{Getenv: noEnv, Vars: map[string]string{"pw": "Url-Secret-42"}})
	require.True(t, diags.HasErrors())
	assert.Contains(t, diags.Error(), "Invalid master URL")
	assert.NotContains(t, diags.Error(), "Url-Secret-42")

	sens := strings.Replace(src, `"10.0.0.3:6379"`, `var.pw`, 1)
	_, diags = Load("t.hcl", []byte(sens), Options{Getenv: noEnv, Vars: map[string]string{"pw": "Url-Secret-42"}})
	require.True(t, diags.HasErrors())
	assert.Contains(t, diags.Error(), "Sensitive value not allowed here")
}

// A defaults block gives every master its credentials, db and tls; a master's own
// values win (its tls block replaces the default one whole).
func TestDefaultsBlock(t *testing.T) {
	src := `variable "pw" {
  type      = string
  sensitive = true
}
cluster "c" {
  defaults {
    username = "app"
    password = var.pw
    db       = 2
    tls { server_name = "redis.internal" }
  }
  master "a" { address = "10.0.0.1:6379" }
  master "b" {
    address = "10.0.0.2:6379"
    db      = 5
    tls { insecure_skip_verify = true }
  }
  master "c" { address = "10.0.0.3:6379" }
  ignore "vulnerable-version" {
    reason  = "Debian backports the Lua fixes"
    masters = ["a", "b"]
  }
}
`
	cfg, diags := Load("t.hcl", []byte(src), Options{Getenv: noEnv, Vars: map[string]string{"pw": "Def-Secret-1"}})
	require.Empty(t, diags)
	a, b := cfg.Cluster.Masters[0], cfg.Cluster.Masters[1]
	assert.Equal(t, "app", a.Username)
	assert.Equal(t, "Def-Secret-1", a.Password)
	assert.Equal(t, 2, a.DB)
	require.NotNil(t, a.TLS)
	assert.Equal(t, "redis.internal", a.TLS.ServerName)
	assert.Equal(t, 5, b.DB)
	assert.Equal(t, "", b.TLS.ServerName, "b's own tls block replaces the default")
	assert.True(t, b.TLS.InsecureSkipVerify)
	require.Len(t, cfg.Cluster.Ignores, 1)
	assert.NotNil(t, cfg.Cluster.Acknowledged("vulnerable-version", "a"))
	assert.Nil(t, cfg.Cluster.Acknowledged("vulnerable-version", "c"))

	for _, tt := range []struct{ ignore, want string }{
		{`ignore "no-such-code" { reason = "x" }`, "Unknown finding code"},
		{`ignore "eviction-policy" { reason = "x" }`, "Errors cannot be acknowledged"},
		{`ignore "clock-offset" {}`, "reason"},
		{`ignore "clock-offset" {
    reason  = "x"
    masters = ["zz"]
  }`, `names master "zz"`},
	} {
		bad := strings.Replace(src, `ignore "vulnerable-version" {
    reason  = "Debian backports the Lua fixes"
    masters = ["a", "b"]
  }`, tt.ignore, 1)
		_, diags := Load("t.hcl", []byte(bad), Options{Getenv: noEnv, Vars: map[string]string{"pw": "Def-Secret-1"}, AllowUnknown: true})
		require.True(t, diags.HasErrors(), tt.ignore)
		assert.Contains(t, diags.Error(), tt.want, tt.ignore)
	}
}
