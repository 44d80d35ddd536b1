package cli

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunDeadlines(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name        string
		ttl, margin time.Duration
		marginGiven bool
		grace       time.Duration
		want        deadlines
		err         string
	}{
		{"defaults: margin ttl/5, grace clipped", 3 * time.Second, 0, false, 5 * time.Second,
			deadlines{margin: 600 * ms, lead: 100 * ms, grace: 500 * ms, clipped: true}, ""},
		{"a grace that fits", 3 * time.Second, 0, false, 100 * ms,
			deadlines{margin: 600 * ms, lead: 100 * ms, grace: 100 * ms}, ""},
		{"short ttl: margin at least 10ms, lead half of it", 40 * ms, 0, false, time.Second,
			deadlines{margin: 10 * ms, lead: 5 * ms, grace: 5 * ms, clipped: true}, ""},
		{"very short ttl: margin ttl/5, below half the ttl", 20 * ms, 0, false, time.Second,
			deadlines{margin: 4 * ms, lead: 2 * ms, grace: 2 * ms, clipped: true}, ""},
		{"margin given", 10 * time.Second, 2 * time.Second, true, time.Second,
			deadlines{margin: 2 * time.Second, lead: 100 * ms, grace: time.Second}, ""},
		{"margin not below the ttl", time.Second, time.Second, true, 0, deadlines{}, "-margin 1.0s must be shorter"},
		// Regression: a -margin of half the TTL or more was accepted, and SIGTERM
		// came before the keep-alive's first extension on every run.
		{"margin not below half the ttl", time.Second, 500 * ms, true, 0, deadlines{}, "-margin 500ms must be shorter than half"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := runDeadlines(tt.ttl, tt.margin, tt.grace, tt.marginGiven)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.LessOrEqual(t, got.grace+got.lead, got.margin, "SIGKILL never later than the deadline - lead")
		})
	}
}

// -max-hold's end is known at the start: the deadline in force never passes it,
// even when the lock's own Until (not yet shortened by the final extension) does.
func TestRunDeadlineNeverPassesMaxHoldEnd(t *testing.T) {
	acquired := time.Now()
	end := holdEnd(acquired, 2*time.Second, 22*time.Millisecond)
	assert.Equal(t, acquired.Add(2*time.Second-23*time.Millisecond), end, "1ms of truncation and the drift budget")
	tests := []struct {
		name      string
		hard      time.Time
		lockUntil time.Time
		want      time.Time
	}{
		{"no -max-hold", time.Time{}, acquired.Add(3 * time.Second), acquired.Add(3 * time.Second)},
		{"the lock's Until past the -max-hold end", end, acquired.Add(3 * time.Second), end},
		{"the lock's Until before it", end, acquired.Add(time.Second), acquired.Add(time.Second)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, deadlines{hard: tt.hard}.until(tt.lockUntil))
		})
	}
}
