package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Durations in messages were Go's (5m0s, 10s, 1.5s) beside the human format of
// the console, nodes and locks (5m00s, 10.0s): every message writes them one way
// (internal/human). These messages come before any master is asked.
func TestBugDurationsInMessagesUseOneFormat(t *testing.T) {
	masters := []string{"-masters", "127.0.0.1:1"}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"ttl above max_ttl", []string{"acquire", "x", "-ttl", "10m"},
			"-ttl 10m00s is above the cluster's max_ttl 5m00s"},
		{"ttl below the drift budget", []string{"acquire", "x", "-ttl", "1ms"},
			"-ttl 1ms leaves no validity after the drift budget (1% + 2ms)"},
		{"margin over half the ttl", []string{"run", "x", "-ttl", "10s", "-margin", "6s", "--", "true"},
			"-margin 6.0s must be shorter than half the lock's ttl 10.0s"},
		{"max-hold inside the margin", []string{"run", "x", "-ttl", "10s", "-max-hold", "1500ms", "--", "true"},
			"-max-hold 1.5s leaves the command no time: it gets SIGTERM -margin 2.0s before the lock's end"},
		{"hold above the ttl", []string{"bench", "-hold", "45s"},
			"-hold 45.0s must be below the lock's TTL 30.0s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{tc.args[0]}, masters...), tc.args[1:]...)
			code, _, stderr := runCLI(t, nil, args...)
			assert.Equal(t, ExitUsage, code, stderr)
			assert.Contains(t, stderr, tc.want)
		})
	}
}
