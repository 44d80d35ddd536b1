package health

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/topology"
)

func testCluster(mut ...func(*topology.Cluster)) *topology.Cluster {
	c := topology.NewCluster("t")
	c.Masters = []topology.Master{{Name: "a", Address: "127.0.0.1:1"}}
	c.Settings = []topology.Setting{{Name: "maxmemory-policy", Value: "noeviction"}}
	for _, f := range mut {
		f(c)
	}
	return c
}

// safe returns the facts of a master that gets no finding under testCluster.
func safe() topology.NodeHealth {
	return topology.NodeHealth{
		Master: "a", Address: "127.0.0.1:1", Reachable: true, Latency: time.Millisecond,
		Role: "master", Mode: "standalone", Version: "8.2.2", RunID: "r1", Uptime: time.Hour,
		ClockUncertainty: 100 * time.Microsecond,
		Config: map[string]string{
			"maxmemory-policy": "noeviction", "appendonly": "yes", "appendfsync": "always",
			"enable-debug-command": "no", "save": "",
		},
		AOFLastWriteStatus: "ok", RDBLastBgsaveStatus: "ok",
	}
}

type want struct {
	sev  topology.Severity
	code string
}

func codes(fs []topology.Finding) []want {
	out := []want{}
	for _, f := range fs {
		out = append(out, want{f.Severity, f.Code})
	}
	return out
}

func TestAssessRules(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	noQuarantine := func(c *topology.Cluster) { c.RestartQuarantine = false }
	fencingLock := func(c *topology.Cluster) { c.Locks = []topology.Policy{{Match: "f/*", Fencing: true}} }
	E, W, I := topology.SeverityError, topology.SeverityWarning, topology.SeverityInfo
	tests := []struct {
		name    string
		cluster *topology.Cluster
		facts   func(h *topology.NodeHealth)
		want    []want
	}{
		{"safe master", testCluster(), func(h *topology.NodeHealth) {}, []want{}},
		{"unreachable stops other rules", testCluster(), func(h *topology.NodeHealth) {
			*h = topology.NodeHealth{Master: "a", Error: "dial tcp: connection refused"}
		}, []want{{E, topology.CodeUnreachable}}},
		{"auth failure", testCluster(), func(h *topology.NodeHealth) {
			*h = topology.NodeHealth{Master: "a", Reachable: true, AuthFailed: true, Error: "WRONGPASS"}
		}, []want{{E, topology.CodeAuthFailed}}},
		{"replica", testCluster(), func(h *topology.NodeHealth) { h.Role = "slave" }, []want{{E, topology.CodeReplica}}},
		{"sentinel mode", testCluster(), func(h *topology.NodeHealth) { h.Mode = "sentinel" }, []want{{E, topology.CodeServerMode}}},
		{"cluster mode", testCluster(), func(h *topology.NodeHealth) { h.Mode = "cluster" }, []want{{E, topology.CodeServerMode}}},
		{"allkeys-lru", testCluster(), func(h *topology.NodeHealth) { h.Config["maxmemory-policy"] = "allkeys-lru" },
			[]want{{E, topology.CodeEvictionPolicy}}},
		{"volatile-ttl", testCluster(), func(h *topology.NodeHealth) { h.Config["maxmemory-policy"] = "volatile-ttl" },
			[]want{{E, topology.CodeEvictionPolicy}}},
		{"aof write error", testCluster(), func(h *topology.NodeHealth) { h.AOFLastWriteStatus = "err" },
			[]want{{E, topology.CodePersistenceError}}},
		{"rdb save error", testCluster(), func(h *topology.NodeHealth) { h.RDBLastBgsaveStatus = "err" },
			[]want{{E, topology.CodePersistenceError}}},
		{"replicas attached", testCluster(), func(h *topology.NodeHealth) { h.Replicas = 1 },
			[]want{{W, topology.CodeReplicasAttached}}},
		{"aof off with quarantine on is fine", testCluster(), func(h *topology.NodeHealth) { h.Config["appendonly"] = "no" }, []want{}},
		{"aof off without quarantine", testCluster(noQuarantine), func(h *topology.NodeHealth) { h.Config["appendonly"] = "no" },
			[]want{{W, topology.CodeWeakPersistence}}},
		{"everysec without quarantine", testCluster(noQuarantine), func(h *topology.NodeHealth) { h.Config["appendfsync"] = "everysec" },
			[]want{{W, topology.CodeWeakPersistence}}},
		{"fsync no without quarantine", testCluster(noQuarantine), func(h *topology.NodeHealth) { h.Config["appendfsync"] = "no" },
			[]want{{W, topology.CodeWeakPersistence}}},
		{"fencing with everysec", testCluster(fencingLock), func(h *topology.NodeHealth) { h.Config["appendfsync"] = "everysec" },
			[]want{{W, topology.CodeFencingFsync}}},
		{"fencing with always is fine", testCluster(fencingLock), func(h *topology.NodeHealth) {}, []want{}},
		{"debug command local", testCluster(), func(h *topology.NodeHealth) { h.Config["enable-debug-command"] = "local" },
			[]want{{W, topology.CodeDebugCommand}}},
		{"clock beyond budget", testCluster(), func(h *topology.NodeHealth) { h.ClockOffset = 2 * time.Second },
			[]want{{W, topology.CodeClockOffset}}},
		{"clock behind beyond budget", testCluster(), func(h *topology.NodeHealth) { h.ClockOffset = -2 * time.Second },
			[]want{{W, topology.CodeClockOffset}}},
		{"clock within budget once uncertainty counted", testCluster(), func(h *topology.NodeHealth) {
			h.ClockOffset = 302*time.Millisecond + 50*time.Millisecond // budget of 30s: 302ms
			h.ClockUncertainty = 60 * time.Millisecond
		}, []want{}},
		{"old version", testCluster(), func(h *topology.NodeHealth) { h.Version = "6.2.6" },
			[]want{{W, topology.CodeVulnerable}}},
		{"keys evicted", testCluster(), func(h *topology.NodeHealth) { h.EvictedKeys = 3 },
			[]want{{W, topology.CodeKeysEvicted}}},
		{"config denied is a warning, not a failure", testCluster(), func(h *topology.NodeHealth) {
			h.Config, h.ConfigError = nil, "NOPERM this user has no permissions to run the 'config|get' command"
		}, []want{{W, topology.CodeConfigDenied}}},
		{"info denied", testCluster(), func(h *topology.NodeHealth) {
			h.InfoError = "NOPERM"
			h.Role, h.Mode, h.Version, h.Uptime = "", "", "", 0
		}, []want{{W, topology.CodeInfoDenied}}},
		{"young master quarantined", testCluster(), func(h *topology.NodeHealth) { h.Uptime = 10 * time.Second },
			[]want{{I, topology.CodeQuarantined}}},
		{"young master with quarantine off", testCluster(noQuarantine), func(h *topology.NodeHealth) { h.Uptime = 10 * time.Second }, []want{}},
		{"errors sort before warnings and info", testCluster(), func(h *topology.NodeHealth) {
			h.Uptime = time.Second
			h.Replicas = 2
			h.Role = "slave"
		}, []want{{E, topology.CodeReplica}, {W, topology.CodeReplicasAttached}, {I, topology.CodeQuarantined}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := safe()
			tt.facts(&h)
			Assess(tt.cluster, &h, now)
			assert.Equal(t, tt.want, codes(h.Findings))
			for _, f := range h.Findings {
				assert.NotEmpty(t, f.Summary, f.Code)
				assert.NotEmpty(t, f.Detail, f.Code)
			}
			// Assess is idempotent.
			before := append([]topology.Finding(nil), h.Findings...)
			Assess(tt.cluster, &h, now)
			assert.Equal(t, before, h.Findings)
		})
	}
}

func TestAssessQuarantine(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := testCluster()
	window := c.QuarantineWindow()
	require.Equal(t, 5*time.Minute+5*time.Minute/100+2*time.Millisecond, window)

	t.Run("young master: until now + window - uptime + 1s", func(t *testing.T) {
		h := safe()
		h.Uptime = 10 * time.Second
		Assess(c, &h, now)
		assert.Equal(t, now.Add(window-10*time.Second+time.Second), h.QuarantineUntil)
		assert.Equal(t, topology.StateQuarantined, h.State(now))
		assert.False(t, h.Healthy(now))
		assert.True(t, h.Healthy(h.QuarantineUntil))
	})
	t.Run("old master not quarantined", func(t *testing.T) {
		h := safe()
		h.Uptime = window
		Assess(c, &h, now)
		assert.True(t, h.QuarantineUntil.IsZero())
		assert.True(t, h.Healthy(now))
	})
	t.Run("a later quarantine from a run_id change is kept", func(t *testing.T) {
		h := safe()
		h.Uptime = window - time.Second // young by uptime: ends in 2s
		h.QuarantineUntil = now.Add(window)
		Assess(c, &h, now)
		assert.Equal(t, now.Add(window), h.QuarantineUntil)
	})
	t.Run("quarantine off clears it", func(t *testing.T) {
		c := testCluster(func(c *topology.Cluster) { c.RestartQuarantine = false })
		h := safe()
		h.QuarantineUntil = now.Add(time.Hour)
		Assess(c, &h, now)
		assert.True(t, h.QuarantineUntil.IsZero())
		assert.Equal(t, topology.StateUp, h.State(now))
	})
}

func TestEvictionDetailNamesTheFix(t *testing.T) {
	h := safe()
	h.Config["maxmemory-policy"] = "allkeys-lru"
	Assess(testCluster(), &h, time.Now())
	require.Len(t, h.Findings, 1)
	assert.Contains(t, h.Findings[0].Detail, "apply sets noeviction")

	h = safe()
	h.Config["maxmemory-policy"] = "allkeys-lru"
	Assess(testCluster(func(c *topology.Cluster) { c.Settings = nil }), &h, time.Now())
	require.Len(t, h.Findings, 1)
	assert.Contains(t, h.Findings[0].Detail, `maxmemory_policy = "noeviction"`)
}

func TestLuaCVEs(t *testing.T) {
	tests := []struct {
		version string
		want    []string
	}{
		{"6.2.6", []string{"CVE-2022-24735", "CVE-2022-24736", "CVE-2022-24834", "CVE-2024-31449", "CVE-2024-46981", "CVE-2025-49844", "CVE-2025-46817", "CVE-2025-46818", "CVE-2025-46819"}},
		{"6.2.13", []string{"CVE-2024-31449", "CVE-2024-46981", "CVE-2025-49844", "CVE-2025-46817", "CVE-2025-46818", "CVE-2025-46819"}},
		{"6.2.20", nil},
		{"7.0.11", []string{"CVE-2022-24834", "CVE-2024-31449", "CVE-2024-46981", "CVE-2025-49844", "CVE-2025-46817", "CVE-2025-46818", "CVE-2025-46819"}},
		{"7.0.15", []string{"CVE-2024-31449", "CVE-2024-46981", "CVE-2025-49844", "CVE-2025-46817", "CVE-2025-46818", "CVE-2025-46819"}},
		{"7.2.6", []string{"CVE-2024-46981", "CVE-2025-49844", "CVE-2025-46817", "CVE-2025-46818", "CVE-2025-46819"}},
		{"7.2.11", nil},
		{"7.4.5", []string{"CVE-2025-49844", "CVE-2025-46817", "CVE-2025-46818", "CVE-2025-46819"}},
		{"8.0.4", nil},
		{"8.2.1", []string{"CVE-2025-49844", "CVE-2025-46817", "CVE-2025-46818", "CVE-2025-46819"}},
		{"8.2.2", nil},
		{"8.4.0", nil},
		{"255.255.255", nil}, // unknown future release: no claim
		{"", nil},
		{"garbage", nil},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			assert.Equal(t, tt.want, luaCVEs(tt.version))
		})
	}
}
