package health

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/redlock/redlock/topology"
)

func TestDiff(t *testing.T) {
	c := testCluster(func(c *topology.Cluster) {
		c.Settings = []topology.Setting{
			{Name: "maxmemory_policy", Value: "noeviction"},
			{Name: "appendonly", Value: "yes"},
			{Name: "maxmemory", Value: "1mb"},
			{Name: "no-such-setting", Value: "x"},
		}
	})
	tests := []struct {
		name   string
		config map[string]string
		want   []Change
	}{
		{"all differ", map[string]string{"maxmemory-policy": "allkeys-lru", "appendonly": "no", "maxmemory": "0"}, []Change{
			{Setting: "maxmemory-policy", From: "allkeys-lru", To: "noeviction"},
			{Setting: "appendonly", From: "no", To: "yes"},
			{Setting: "maxmemory", From: "0", To: "1mb"},
			{Setting: "no-such-setting", To: "x", Unknown: true},
		}},
		{"units and case are normalised", map[string]string{"maxmemory-policy": "NoEviction", "appendonly": "yes", "maxmemory": "1048576", "no-such-setting": "x"}, nil},
		{"kb vs k differ", map[string]string{"maxmemory-policy": "noeviction", "appendonly": "yes", "maxmemory": "1000000", "no-such-setting": "x"},
			[]Change{{Setting: "maxmemory", From: "1000000", To: "1mb"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := safe()
			h.Config = tt.config
			assert.Equal(t, tt.want, Diff(c, &h))
		})
	}
	t.Run("unchecked masters have no diff", func(t *testing.T) {
		for _, h := range []topology.NodeHealth{
			{Master: "a"},
			{Master: "a", Reachable: true, AuthFailed: true},
			{Master: "a", Reachable: true, ConfigError: "NOPERM"},
		} {
			assert.False(t, Checked(&h))
			assert.Nil(t, Diff(c, &h))
		}
	})
}

func TestChangeString(t *testing.T) {
	assert.Equal(t, `~ maxmemory-policy: "allkeys-lru" -> "noeviction"`,
		Change{Setting: "maxmemory-policy", From: "allkeys-lru", To: "noeviction"}.String())
	assert.Equal(t, `~ x: (not reported by the server) -> "1"`, Change{Setting: "x", To: "1", Unknown: true}.String())
}

func TestPlanSummary(t *testing.T) {
	now := time.Now()
	c := testCluster(func(c *topology.Cluster) {
		c.Masters = []topology.Master{{Name: "a"}, {Name: "b"}, {Name: "c"}}
		c.Settings = []topology.Setting{{Name: "maxmemory-policy", Value: "noeviction"}, {Name: "appendfsync", Value: "always"}}
	})
	a := safe()
	a.Master = "a"
	a.Config["maxmemory-policy"] = "allkeys-lru"
	a.Config["appendfsync"] = "everysec"
	b := safe()
	b.Master = "b"
	b.Config["enable-debug-command"] = "yes"
	b.Config["appendfsync"] = "no"
	d := topology.NodeHealth{Master: "c", Error: "refused"}
	hs := []topology.NodeHealth{a, b, d}
	for i := range hs {
		Assess(c, &hs[i], now)
	}
	p := NewPlan(c, hs, now)
	// a's eviction policy is an error that its pending change fixes; c unreachable is not.
	assert.Equal(t, Summary{Changes: 3, Masters: 2, Errors: 2, Warnings: 1, FixableErrors: 1, Unchecked: 1}, p.Summary)
	assert.Equal(t, 1, p.Summary.Unfixable())
	for i, f := range p.Masters[0].Health.Findings {
		if f.Code == topology.CodeEvictionPolicy {
			assert.True(t, f.Fixable, "declared noeviction fixes it")
			assert.False(t, hs[0].Findings[i].Fixable, "the input is not modified")
		}
	}
	assert.Equal(t, "Plan: 3 settings to change on 2 masters; 2 errors, 1 warning. 1 master not checked.", p.Summary.String())
	assert.Equal(t, topology.StateDegraded, p.Masters[0].State)
	assert.Equal(t, topology.StateDown, p.Masters[2].State)
	assert.Equal(t, []Change{}, p.Masters[2].Changes)

	assert.Equal(t, "Plan: 1 setting to change on 1 master; 0 errors, 0 warnings.",
		Summary{Changes: 1, Masters: 1}.String())
}
