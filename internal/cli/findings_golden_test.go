package cli

import (
	"bytes"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/redlock/redlock/internal/health"
	"github.com/redlock/redlock/topology"
)

// TestFindingsGolden pins how plan prints findings: identical ones once with the
// masters they are on, a finding on one master alone, acknowledged ones marked
// "ack" with the file's reason (golden file; go test -update rewrites it).
func TestFindingsGolden(t *testing.T) {
	cve := topology.Finding{Severity: topology.SeverityWarning, Code: topology.CodeVulnerable,
		Summary: "redis 7.0.15 has known Lua-engine CVEs", Detail: "upgrade to 7.0.16 or later"}
	acked := cve
	acked.Acknowledged = "the distribution backports the Lua fixes"
	evict := topology.Finding{Severity: topology.SeverityError, Code: topology.CodeEvictionPolicy,
		Summary: "maxmemory-policy allkeys-lru can evict lock keys", Fixable: true}
	master := func(name string, fs ...topology.Finding) health.MasterPlan {
		return health.MasterPlan{Health: topology.NodeHealth{Master: name, Findings: fs}}
	}
	tests := []struct {
		name string
		plan health.Plan
	}{
		{"grouped", health.Plan{Masters: []health.MasterPlan{master("a", cve), master("b", cve, evict), master("c", cve)}}},
		{"acknowledged", health.Plan{Masters: []health.MasterPlan{master("a", acked), master("b", acked), master("c", evict)}}},
		{"none", health.Plan{Masters: []health.MasterPlan{master("a"), master("b")}}},
		// A server answers what it likes: its version reaches the summary escaped.
		{"hostile server", health.Plan{Masters: []health.MasterPlan{master("a", topology.Finding{Severity: topology.SeverityWarning,
			Code: topology.CodeUnknownServer, Summary: "server evil 1.0\x1b]0;owned\x07\x1b[2J is not known to support redlock",
			Detail: "line\nbreak"})}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			var hs []topology.NodeHealth
			for _, mp := range tt.plan.Masters {
				hs = append(hs, mp.Health)
			}
			health.WriteFindings(&out, hs, true, nil)
			golden.RequireEqual(t, out.Bytes())
		})
	}
}

// TestCompletionScriptsGolden pins each shell's completion script.
func TestCompletionScriptsGolden(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish"} {
		t.Run(sh, func(t *testing.T) {
			r := runHealthCmd(t, "", "completion", sh)
			if r.code != ExitOK {
				t.Fatalf("completion %s: exit %d: %s", sh, r.code, r.stderr)
			}
			golden.RequireEqual(t, []byte(r.stdout))
		})
	}
}
