package health

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/redlock/redlock/topology"
)

// Valkey always reports redis_version:7.2.4: the server and its version come from
// server_name and valkey_version, and Redis's CVE list is not applied to it.
func TestServerDetection(t *testing.T) {
	tests := []struct {
		name, info    string
		server, ver   string
		unknown, cves bool
	}{
		{"redis", "# Server\r\nredis_version:7.0.15\r\nexecutable:/usr/bin/redis-server\r\n", "redis", "7.0.15", false, true},
		{"valkey", "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:8.0.1\r\n", "valkey", "8.0.1", false, false},
		{"dragonfly", "# Server\r\nredis_version:7.4.0\r\ndragonfly_version:df-v1.21.2\r\n", "dragonfly", "df-v1.21.2", true, false},
		{"keydb", "# Server\r\nredis_version:6.3.4\r\nexecutable:/usr/bin/keydb-server\r\n", "keydb", "6.3.4", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := safe()
			h.Version = ""
			fillInfo(&h, tt.info)
			assert.Equal(t, tt.server, h.ServerName())
			assert.Equal(t, tt.ver, h.Version)
			Assess(testCluster(), &h, time.Now())
			var codes []string
			for _, f := range h.Findings {
				codes = append(codes, f.Code)
			}
			assert.Equal(t, tt.unknown, contains(codes, topology.CodeUnknownServer), "%v", codes)
			assert.Equal(t, tt.cves, contains(codes, topology.CodeVulnerable), "%v", codes)
		})
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
