package topology

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNodeHealthState(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	warn := []Finding{{Severity: SeverityWarning, Code: CodeDebugCommand}}
	errs := []Finding{{Severity: SeverityError, Code: CodeEvictionPolicy}}
	tests := []struct {
		name string
		h    NodeHealth
		want NodeState
	}{
		{"up", NodeHealth{Reachable: true}, StateUp},
		{"warnings keep it up", NodeHealth{Reachable: true, Findings: warn}, StateUp},
		{"down wins over everything", NodeHealth{Findings: errs, QuarantineUntil: now.Add(time.Hour)}, StateDown},
		{"error finding degrades", NodeHealth{Reachable: true, Findings: errs, QuarantineUntil: now.Add(time.Hour)}, StateDegraded},
		{"quarantined", NodeHealth{Reachable: true, QuarantineUntil: now.Add(time.Second)}, StateQuarantined},
		{"quarantine over", NodeHealth{Reachable: true, QuarantineUntil: now}, StateUp},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.h.State(now))
			assert.Equal(t, tt.want == StateUp, tt.h.Healthy(now))
		})
	}
}

func TestNodeHealthPersistence(t *testing.T) {
	tests := []struct {
		name   string
		config map[string]string
		aof    string
		want   string
	}{
		{"unknown", nil, "", "?"},
		{"aof always", map[string]string{"appendonly": "yes", "appendfsync": "always"}, "ok", "aof always"},
		{"aof everysec", map[string]string{"appendonly": "yes", "appendfsync": "everysec"}, "ok", "aof everysec"},
		{"rdb", map[string]string{"appendonly": "no", "save": "3600 1"}, "ok", "rdb"},
		{"none", map[string]string{"appendonly": "no", "save": ""}, "ok", "none"},
		{"write error", map[string]string{"appendonly": "yes", "appendfsync": "always"}, "err", "aof always (write error)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := NodeHealth{Config: tt.config, AOFLastWriteStatus: tt.aof}
			assert.Equal(t, tt.want, h.Persistence())
		})
	}
	assert.Equal(t, "?", (&NodeHealth{}).EvictionPolicy())
	assert.Equal(t, "noeviction", (&NodeHealth{Config: map[string]string{"maxmemory-policy": "noeviction"}}).EvictionPolicy())
}

func TestFindingJSON(t *testing.T) {
	b, err := json.Marshal(Finding{Severity: SeverityWarning, Code: CodeClockOffset, Summary: "s"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"severity":"warning","code":"clock-offset","summary":"s","fixable":false}`, string(b))
}
