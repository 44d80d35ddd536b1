package tui

import (
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/assert"

	"github.com/redlock/redlock/topology"
)

// TestBugNodeDetailUptimeAgreesWithItsRow: a master that does not tell its
// uptime (the embedded demo masters) read "uptime ?" in its row and "uptime
// 0ms" in its detail. Both say "?" when it is unknown, and the uptime when it is.
func TestBugNodeDetailUptimeAgreesWithItsRow(t *testing.T) {
	st := DefaultStyles()
	now := time.Now()
	tests := []struct {
		name string
		node topology.NodeHealth
		row  string
		det  string
	}{
		{"unknown", topology.NodeHealth{Master: "a", Reachable: true}, "uptime ?", "uptime ?"},
		{"known", topology.NodeHealth{Master: "a", Reachable: true, Uptime: 90 * time.Second, RunID: "abc"}, "up 1m30s", "uptime 1m30s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			row, _ := uptime(st, &tt.node, now)
			assert.Equal(t, tt.row, row)
			detail := ansi.Strip(nodeDetailView(st, detailVM{now: now, polled: true, node: &tt.node}, 120, 30))
			assert.Contains(t, detail, tt.det)
			assert.NotContains(t, detail, "uptime 0ms")
		})
	}
}
