package cli

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/redlock/redlock/topology"
)

// A master in quarantine stays one finding from line to line although its text
// counts down: watch printed "[+info quarantined on b] [cleared quarantined]"
// on every line. A finding that really appears, moves to another master or
// clears is still shown.
func TestBugWatchRepeatsACountingDownFinding(t *testing.T) {
	q := func(left string, masters ...string) findingJSON {
		return findingJSON{Finding: topology.Finding{Severity: topology.SeverityInfo, Code: topology.CodeQuarantined,
			Summary: "quarantined until 2026-01-01T00:00:00Z (" + left + " left)"}, Masters: masters}
	}
	snap := func(fs ...findingJSON) snapshotJSON {
		return snapshotJSON{Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Total: 5, Quorum: 3, Findings: fs}
	}
	tests := []struct {
		name      string
		prev, cur snapshotJSON
		want      []string
		wantNot   []string
	}{
		{"counting down", snap(q("12s", "b")), snap(q("11s", "b")), nil, []string{"[+info", "[cleared"}},
		{"another master", snap(q("12s", "b")), snap(q("11s", "b", "c")), []string{"[+info quarantined on b,c]", "[cleared quarantined]"}, nil},
		{"cleared", snap(q("1s", "b")), snap(), []string{"[cleared quarantined]"}, []string{"[+info"}},
		{"appeared", snap(), snap(q("30s", "b")), []string{"[+info quarantined on b]"}, []string{"[cleared"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prev := tt.prev
			line := watchLine{snapshotJSON: tt.cur, prev: &prev}.humanLine()
			for _, w := range tt.want {
				assert.Contains(t, line, w)
			}
			for _, w := range tt.wantNot {
				assert.NotContains(t, line, w)
			}
		})
	}
}
