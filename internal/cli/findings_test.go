package cli

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Identical findings are shown once with the masters they are on, and an ignore
// block acknowledges one: shown as acknowledged with its reason, not counted as a
// warning.
func TestPlanGroupsAndAcknowledgesFindings(t *testing.T) {
	a := healthServer(t, "a", "--appendfsync", "always", "--appendonly", "yes")
	b := healthServer(t, "b", "--appendfsync", "always", "--appendonly", "yes")
	c := healthServer(t, "c", "--appendfsync", "always", "--appendonly", "yes")
	cfg := writeHealthTopology(t, healthMaster{name: "a", addr: a.Addr()}, healthMaster{name: "b", addr: b.Addr()}, healthMaster{name: "c", addr: c.Addr()})
	r := runHealthCmd(t, "", "plan", "-config", cfg)
	require.Equal(t, ExitOK, r.code, "%s%s", r.stdout, r.stderr)
	// redis 7.0.x has the Lua CVE warning on every master: one line for the three.
	assert.Regexp(t, regexp.MustCompile(`warning vulnerable-version: redis \S+ has known Lua-engine CVEs \[3 masters: a, b, c\]`), r.stdout)
	assert.Equal(t, 1, strings.Count(r.stdout, "vulnerable-version"), r.stdout)

	src, err := os.ReadFile(cfg)
	require.NoError(t, err)
	acked := strings.TrimSuffix(string(src), "}\n") + `  ignore "vulnerable-version" {
    reason = "the distribution backports the Lua fixes"
  }
}
`
	require.NoError(t, os.WriteFile(cfg, []byte(acked), 0o600))
	r = runHealthCmd(t, "", "plan", "-config", cfg)
	require.Equal(t, ExitOK, r.code, "%s%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "ack     vulnerable-version:")
	assert.Contains(t, r.stdout, "acknowledged in the file: the distribution backports the Lua fixes")
	assert.Contains(t, r.stdout, "3 findings acknowledged.")
	assert.Contains(t, r.stdout, "0 warnings")

	r = runHealthCmd(t, "", "validate", "-config", cfg)
	assert.Equal(t, ExitOK, r.code, r.stderr)
}
