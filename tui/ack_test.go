package tui

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/redlock/redlock/topology"
)

// Regression (issue 23 item 6): the console's node row named an acknowledged
// finding as the master's worst; an ignore block silences it in the console too.
func TestWorstFindingSkipsAcknowledged(t *testing.T) {
	fencing := topology.Finding{Severity: topology.SeverityWarning, Code: topology.CodeFencingFsync, Acknowledged: "advisory fences"}
	cve := topology.Finding{Severity: topology.SeverityWarning, Code: topology.CodeVulnerable}
	assert.Equal(t, "", worstFinding(&topology.NodeHealth{Findings: []topology.Finding{fencing}}))
	assert.Equal(t, topology.CodeVulnerable, worstFinding(&topology.NodeHealth{Findings: []topology.Finding{fencing, cve}}))
	fencing.Acknowledged = ""
	assert.Equal(t, topology.CodeFencingFsync, worstFinding(&topology.NodeHealth{Findings: []topology.Finding{fencing}}))
}
