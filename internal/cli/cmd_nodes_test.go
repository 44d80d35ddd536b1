package cli

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	healthServerPassword = "srv-Pass-5e1d"
	healthSensitiveValue = "sensitive-Wrong-Pass-8c2f"
)

// TestNodesPlanApplyKeepSecrets: a master with a wrong password that is a sensitive
// variable, a down master and three safe ones. Each command reports the two bad
// masters, and neither password reaches stdout or stderr.
func TestNodesPlanApplyKeepSecrets(t *testing.T) {
	a := healthServer(t, "a")
	b := healthServer(t, "b")
	e := healthServer(t, "e")
	c := healthServer(t, "c")
	require.NoError(t, c.Client().ConfigSet(context.Background(), "requirepass", healthServerPassword).Err())
	d := healthServer(t, "d")
	d.Kill()
	cfg := writeHealthTopology(t,
		healthMaster{name: "a", addr: a.Addr()}, healthMaster{name: "b", addr: b.Addr()},
		healthMaster{name: "c", addr: c.Addr(), password: true}, healthMaster{name: "d", addr: d.Addr()},
		healthMaster{name: "e", addr: e.Addr()})
	secretArgs := []string{"-config", cfg, "-var", "pw=" + healthSensitiveValue}
	noSecrets := func(t *testing.T, r healthRun) {
		t.Helper()
		for _, s := range []string{healthSensitiveValue, healthServerPassword} {
			assert.NotContains(t, r.stdout, s)
			assert.NotContains(t, r.stderr, s)
		}
	}

	r := runHealthCmd(t, "", append([]string{"nodes"}, secretArgs...)...)
	assert.Equal(t, ExitOK, r.code, "3 of 5 healthy is a quorum: %s%s", r.stdout, r.stderr)
	noSecrets(t, r)
	assert.Contains(t, r.stdout, "MASTER")
	assert.Contains(t, r.stdout, "PERSISTENCE")
	assert.Regexp(t, `(?m)^a\s+127\.0\.0\.1:\d+\s+up\s+\S+\s+master\s+\S+\s+\S+\s+-\s+\S+±\S+\s+aof always\s+noeviction$`, r.stdout)
	assert.Regexp(t, `(?m)^c\s+\S+\s+degraded\s`, r.stdout)
	assert.Regexp(t, `(?m)^d\s+\S+\s+down\s`, r.stdout)
	assert.Regexp(t, `(?m)^  error   auth-failed: authentication failed: .* \[master c\]$`, r.stdout)
	assert.Regexp(t, `(?m)^  error   unreachable: .* \[master d\]$`, r.stdout)
	assert.NotContains(t, r.stdout, "unreachable: unreachable:", "the code is not said twice")
	assert.Regexp(t, `(?m)^  warning vulnerable-version: .* \[3 masters: a, b, e\]$`, r.stdout, "identical findings grouped as plan does")
	assert.Contains(t, r.stdout, "3/5 masters healthy, quorum 3: quorum available.")

	r = runHealthCmd(t, "", append([]string{"nodes", "-json"}, secretArgs...)...)
	assert.Equal(t, ExitOK, r.code)
	noSecrets(t, r)
	var doc struct {
		Cluster string
		Quorum  int
		Healthy int
		OK      bool
		Nodes   []struct {
			Master     string
			State      string
			Healthy    bool
			AuthFailed bool `json:"auth_failed"`
			Findings   []struct{ Severity, Code string }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), r.stdout)
	assert.Equal(t, "health", doc.Cluster)
	assert.Equal(t, 3, doc.Quorum)
	assert.Equal(t, 3, doc.Healthy)
	assert.True(t, doc.OK)
	require.Len(t, doc.Nodes, 5)
	assert.Equal(t, []string{"up", "up", "degraded", "down", "up"},
		[]string{doc.Nodes[0].State, doc.Nodes[1].State, doc.Nodes[2].State, doc.Nodes[3].State, doc.Nodes[4].State})
	assert.True(t, doc.Nodes[2].AuthFailed)
	require.NotEmpty(t, doc.Nodes[2].Findings)
	assert.Equal(t, "error", doc.Nodes[2].Findings[0].Severity)
	assert.Equal(t, "auth-failed", doc.Nodes[2].Findings[0].Code)

	r = runHealthCmd(t, "", append([]string{"plan", "-detailed-exitcode"}, secretArgs...)...)
	assert.Equal(t, ExitError, r.code)
	noSecrets(t, r)
	assert.Contains(t, r.stdout, `master "c" (`+c.Addr()+`): degraded, settings not checked`)
	assert.Contains(t, r.stdout, `master "d" (`+d.Addr()+`): down, settings not checked`)
	assert.Regexp(t, `(?m)^Plan: 0 settings to change on 0 masters; 2 errors, \d+ warnings?\. 2 masters not checked\.$`, r.stdout)

	r = runHealthCmd(t, "", append([]string{"apply", "-auto-approve"}, secretArgs...)...)
	assert.Equal(t, ExitError, r.code, "masters not checked must fail apply")
	noSecrets(t, r)
	assert.Contains(t, r.stdout, `master "c": not checked`)
	assert.Contains(t, r.stdout, `master "d": not checked`)

	// With a drift to apply, the bad masters are reported as skipped, not silently.
	require.NoError(t, a.Client().ConfigSet(context.Background(), "maxmemory-policy", "allkeys-lfu").Err())
	r = runHealthCmd(t, "", append([]string{"apply", "-auto-approve"}, secretArgs...)...)
	assert.Equal(t, ExitError, r.code)
	noSecrets(t, r)
	assert.Contains(t, r.stdout, `master "a": changed maxmemory-policy: "allkeys-lfu" -> "noeviction"`)
	assert.Contains(t, r.stdout, `master "c": skipped: settings not checked: authentication failed:`)
	assert.Contains(t, r.stdout, `master "d": skipped: settings not checked: unreachable:`)
	assert.NotContains(t, r.stdout, "Apply complete")
	assert.Contains(t, r.stdout, "Error: apply failed (1 setting changed; these failed):")

	// One more master down: below quorum.
	e.Kill()
	r = runHealthCmd(t, "", append([]string{"nodes"}, secretArgs...)...)
	assert.Equal(t, ExitError, r.code)
	noSecrets(t, r)
	assert.Contains(t, r.stdout, "2/5 masters healthy, quorum 3: BELOW QUORUM")
}

func TestNodesUsage(t *testing.T) {
	tests := []struct {
		args []string
		want int
	}{
		{[]string{"nodes", "-bogus"}, ExitUsage},
		{[]string{"nodes", "extra"}, ExitUsage},
		{[]string{"nodes", "-h"}, ExitOK},
		{[]string{"apply", "extra"}, ExitError}, // apply's usage errors are 1, as Terraform's
	}
	for _, tt := range tests {
		r := runHealthCmd(t, "", tt.args...)
		assert.Equal(t, tt.want, r.code, "%v: %s", tt.args, r.stderr)
	}
}
