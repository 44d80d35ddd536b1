package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMastersKeepsQuarantineOffLoopback is the regression test for -masters
// turning restart quarantine off for any address: a one-off acquire against
// remote masters could count the vote of a master that restarted and lost a lock
// still held, and take it twice. Off only when every master is on loopback.
func TestMastersKeepsQuarantineOffLoopback(t *testing.T) {
	tests := []struct {
		name       string
		list       string
		quarantine bool
	}{
		{"all loopback", "127.0.0.1:7001,127.0.0.1:7002,localhost:7003", false},
		{"loopback URLs and IPv6", "redis://:pw@127.0.0.1:7001,rediss://[::1]:7002,127.0.0.1:7003", false},
		{"remote masters", "10.0.0.1:6379,10.0.0.2:6379,10.0.0.3:6379", true},
		{"one remote among loopback", "127.0.0.1:7001,127.0.0.1:7002,redis://:pw@10.0.0.3:6379", true},
		{"a host name", "127.0.0.1:7001,127.0.0.1:7002,redis.internal:6379", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := common{masters: tt.list}
			cfg, diags := c.loadQuiet(&Env{Getenv: func(string) string { return "" }})
			require.False(t, diags.HasErrors(), diags.Error())
			require.NotNil(t, cfg.Cluster)
			assert.Equal(t, tt.quarantine, cfg.Cluster.RestartQuarantine)
		})
	}
}
