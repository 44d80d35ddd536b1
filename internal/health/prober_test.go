package health

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/topology"
)

const (
	serverPassword = "srv-Secret-7f3a"
	wrongPassword  = "wrong-Secret-91bc"
)

// safeArgs make a master that gets no error finding.
var safeArgs = []string{"--maxmemory-policy", "noeviction", "--appendonly", "yes", "--appendfsync", "always", "--enable-debug-command", "no"}

func args(extra ...string) redistest.Options {
	return redistest.Options{Args: append(append([]string{}, safeArgs...), extra...)}
}

func hasFinding(h topology.NodeHealth, sev topology.Severity, code string) bool {
	for _, f := range h.Findings {
		if f.Severity == sev && f.Code == code {
			return true
		}
	}
	return false
}

func byName(hs []topology.NodeHealth) map[string]topology.NodeHealth {
	out := map[string]topology.NodeHealth{}
	for _, h := range hs {
		out[h.Master] = h
	}
	return out
}

// TestProbeFindsEachUnsafeSetting starts one real master per unsafe setting and
// checks that a single probe reports each with its severity.
func TestProbeFindsEachUnsafeSetting(t *testing.T) {
	safe := redistest.StartOne(t, "safe", args())
	lru := redistest.StartOne(t, "lru", args("--maxmemory-policy", "allkeys-lru"))
	vttl := redistest.StartOne(t, "vttl", args("--maxmemory-policy", "volatile-ttl"))
	noaof := redistest.StartOne(t, "noaof", args("--appendonly", "no"))
	everysec := redistest.StartOne(t, "everysec", args("--appendfsync", "everysec"))
	debug := redistest.StartOne(t, "debug", args("--enable-debug-command", "yes"))
	primary := redistest.StartOne(t, "primary", args())
	replica := redistest.StartOne(t, "replica", args())
	auth := redistest.StartOne(t, "auth", args())
	down := redistest.StartOne(t, "down", args())
	down.Kill()

	ctx := context.Background()
	// Set after start: the harness checks readiness with an unauthenticated PING.
	require.NoError(t, auth.Client().ConfigSet(ctx, "requirepass", serverPassword).Err())
	host, port, _ := strings.Cut(primary.Addr(), ":")
	require.NoError(t, replica.Client().ReplicaOf(ctx, host, port).Err())
	require.Eventually(t, func() bool {
		info, err := primary.Client().Info(ctx, "replication").Result()
		return err == nil && strings.Contains(info, "connected_slaves:1")
	}, 10*time.Second, 20*time.Millisecond, "replica did not attach")

	c := topology.NewCluster("probe")
	c.RestartQuarantine = false
	c.NodeTimeout = time.Second
	c.Settings = []topology.Setting{{Name: "maxmemory-policy", Value: "noeviction"}}
	for _, s := range []*redistest.Server{safe, lru, vttl, noaof, everysec, debug, primary, replica, auth, down} {
		m := topology.Master{Name: s.Name, Address: s.Addr()}
		if s == auth {
			m.Password = wrongPassword
		}
		c.Masters = append(c.Masters, m)
	}
	p, err := NewProber(c)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, p.Close()) })

	hs := p.Probe(ctx)
	require.Len(t, hs, len(c.Masters))
	for i, h := range hs {
		assert.Equal(t, c.Masters[i].Name, h.Master, "declared order")
	}
	got := byName(hs)
	E, W := topology.SeverityError, topology.SeverityWarning
	tests := []struct {
		master string
		sev    topology.Severity
		code   string
	}{
		{"lru", E, topology.CodeEvictionPolicy},
		{"vttl", E, topology.CodeEvictionPolicy},
		{"noaof", W, topology.CodeWeakPersistence},
		{"everysec", W, topology.CodeWeakPersistence},
		{"debug", W, topology.CodeDebugCommand},
		{"primary", W, topology.CodeReplicasAttached},
		{"replica", E, topology.CodeReplica},
		{"auth", E, topology.CodeAuthFailed},
		{"down", E, topology.CodeUnreachable},
	}
	for _, tt := range tests {
		t.Run(tt.master+"/"+tt.code, func(t *testing.T) {
			h := got[tt.master]
			assert.True(t, hasFinding(h, tt.sev, tt.code), "want %s %s, got %+v", tt.sev, tt.code, h.Findings)
		})
	}

	t.Run("safe master: facts and no error or warning but the version", func(t *testing.T) {
		h := got["safe"]
		assert.True(t, h.Reachable)
		assert.Equal(t, "master", h.Role)
		assert.Equal(t, "standalone", h.Mode)
		assert.NotEmpty(t, h.Version)
		assert.Len(t, h.RunID, 40)
		assert.Equal(t, "noeviction", h.Config["maxmemory-policy"])
		assert.Equal(t, "aof always", h.Persistence())
		assert.Equal(t, "ok", h.AOFLastWriteStatus)
		assert.Positive(t, h.Latency)
		assert.Positive(t, h.ClockUncertainty)
		// Same host: the offset is within the measurement's own uncertainty plus TIME's
		// microsecond resolution and scheduling noise.
		assert.Less(t, absDur(h.ClockOffset), 50*time.Millisecond)
		for _, f := range h.Findings {
			assert.Equal(t, topology.CodeVulnerable, f.Code, "unexpected finding %+v", f)
		}
		assert.True(t, h.Healthy(time.Now()))
	})
	t.Run("wrong password: reachable, refused, no secret in the report", func(t *testing.T) {
		h := got["auth"]
		assert.True(t, h.Reachable)
		assert.True(t, h.AuthFailed)
		assert.Equal(t, topology.StateDegraded, h.State(time.Now()))
		b, err := json.Marshal(hs)
		require.NoError(t, err)
		assert.NotContains(t, string(b), wrongPassword)
		assert.NotContains(t, string(b), serverPassword)
	})
	t.Run("down master", func(t *testing.T) {
		h := got["down"]
		assert.False(t, h.Reachable)
		assert.NotEmpty(t, h.Error)
		assert.Equal(t, topology.StateDown, h.State(time.Now()))
	})
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// TestProbeQuarantine: a fresh master is quarantined by its uptime; a restart seen
// between two probes (new run_id) starts a full window.
func TestProbeQuarantine(t *testing.T) {
	s := redistest.StartOne(t, "a", args())
	c := topology.NewCluster("q")
	c.NodeTimeout = time.Second
	c.Masters = []topology.Master{{Name: "a", Address: s.Addr()}}
	p, err := NewProber(c)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	ctx := context.Background()
	window := c.QuarantineWindow()

	h := p.Probe(ctx)[0]
	require.True(t, h.Reachable, h.Error)
	assert.True(t, hasFinding(h, topology.SeverityInfo, topology.CodeQuarantined), "%+v", h.Findings)
	assert.Equal(t, topology.StateQuarantined, h.State(h.CheckedAt))
	assert.WithinDuration(t, h.CheckedAt.Add(window-h.Uptime+time.Second), h.QuarantineUntil, time.Millisecond)
	firstRun := h.RunID

	s.Restart(false)
	var h2 topology.NodeHealth
	require.Eventually(t, func() bool {
		h2 = p.Probe(ctx)[0]
		return h2.Reachable && h2.RunID != ""
	}, 10*time.Second, 50*time.Millisecond, "master did not come back")
	require.NotEqual(t, firstRun, h2.RunID)
	assert.False(t, h2.QuarantineUntil.Before(h2.CheckedAt.Add(window)), "restart must quarantine for the full window")
	assert.Equal(t, h2.CheckedAt.Add(window), p.restartUntil["a"])

	t.Run("quarantine off", func(t *testing.T) {
		c2 := *c
		c2.RestartQuarantine = false
		p2, err := NewProber(&c2)
		require.NoError(t, err)
		defer p2.Close()
		h := p2.Probe(ctx)[0]
		assert.True(t, h.QuarantineUntil.IsZero())
		assert.True(t, h.Healthy(time.Now()), "%+v", h.Findings)
	})
}

// TestApplyConverges: apply sets the declared settings on every reachable master,
// reports the down one, and a second plan has no changes.
func TestApplyConverges(t *testing.T) {
	a := redistest.StartOne(t, "a", args("--maxmemory-policy", "allkeys-lru", "--appendonly", "no"))
	b := redistest.StartOne(t, "b", args("--maxmemory-policy", "volatile-ttl", "--maxmemory", "0"))
	down := redistest.StartOne(t, "down", args())
	down.Kill()
	c := topology.NewCluster("apply")
	c.RestartQuarantine = false
	c.NodeTimeout = time.Second
	c.Settings = []topology.Setting{
		{Name: "maxmemory_policy", Value: "noeviction"},
		{Name: "appendonly", Value: "yes"},
		{Name: "maxmemory", Value: "64mb"},
	}
	c.Masters = []topology.Master{{Name: "a", Address: a.Addr()}, {Name: "b", Address: b.Addr()}, {Name: "down", Address: down.Addr()}}
	p, err := NewProber(c)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	ctx := context.Background()

	plan := NewPlan(c, p.Probe(ctx), time.Now())
	assert.Equal(t, Summary{Changes: 5, Masters: 2, Errors: 3, Warnings: 1, Unchecked: 1},
		Summary{Changes: plan.Summary.Changes, Masters: plan.Summary.Masters, Errors: plan.Summary.Errors,
			Warnings: countCode(plan, topology.CodeWeakPersistence), Unchecked: plan.Summary.Unchecked})
	assert.Equal(t, []Change{
		{Setting: "maxmemory-policy", From: "allkeys-lru", To: "noeviction"},
		{Setting: "appendonly", From: "no", To: "yes"},
		{Setting: "maxmemory", From: "0", To: "64mb"},
	}, plan.Masters[0].Changes)

	outs := p.Apply(ctx, plan)
	require.Len(t, outs, 3)
	assert.Len(t, outs[0].Applied, 3)
	assert.Empty(t, outs[0].Failed)
	assert.Len(t, outs[1].Applied, 2)
	assert.True(t, outs[0].OK())
	assert.False(t, outs[0].Persisted, "test servers have no config file")
	assert.Contains(t, outs[0].PersistError, "config file")
	assert.Contains(t, outs[2].Skipped, "unreachable")
	assert.False(t, outs[2].OK())

	again := NewPlan(c, p.Probe(ctx), time.Now())
	assert.Zero(t, again.Summary.Changes)
	assert.Equal(t, 1, again.Summary.Errors, "only the down master remains an error")
	v, err := a.Client().ConfigGet(ctx, "maxmemory").Result()
	require.NoError(t, err)
	assert.Equal(t, "67108864", v["maxmemory"])
}

func countCode(p *Plan, code string) int {
	n := 0
	for _, m := range p.Masters {
		for _, f := range m.Health.Findings {
			if f.Code == code {
				n++
			}
		}
	}
	return n
}

// TestApplyReportsRefusedChange: a setting the server rejects is a failure of that
// change only; the others on the same master are applied.
func TestApplyReportsRefusedChange(t *testing.T) {
	a := redistest.StartOne(t, "a", args("--maxmemory-policy", "allkeys-lru"))
	c := topology.NewCluster("refuse")
	c.RestartQuarantine = false
	c.NodeTimeout = time.Second
	c.Settings = []topology.Setting{{Name: "no-such-setting", Value: "1"}, {Name: "maxmemory-policy", Value: "noeviction"}}
	c.Masters = []topology.Master{{Name: "a", Address: a.Addr()}}
	p, err := NewProber(c)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	ctx := context.Background()

	plan := NewPlan(c, p.Probe(ctx), time.Now())
	require.Len(t, plan.Masters[0].Changes, 2)
	assert.True(t, plan.Masters[0].Changes[0].Unknown)
	o := p.Apply(ctx, plan)[0]
	require.Len(t, o.Failed, 1)
	assert.Equal(t, "no-such-setting", o.Failed[0].Setting)
	assert.NotEmpty(t, o.Failed[0].Error)
	require.Len(t, o.Applied, 1)
	assert.Equal(t, "maxmemory-policy", o.Applied[0].Setting)
	assert.False(t, o.OK())
}

// TestProbeConfigDenied: a user without +config|get gets a finding of its own; the
// master stays reachable and healthy.
func TestProbeConfigDenied(t *testing.T) {
	s := redistest.StartOne(t, "a", args())
	ctx := context.Background()
	require.NoError(t, s.Client().Do(ctx, "ACL", "SETUSER", "prober", "on", ">"+serverPassword, "~*", "+@all", "-config").Err())
	c := topology.NewCluster("acl")
	c.RestartQuarantine = false
	c.NodeTimeout = time.Second
	c.Settings = []topology.Setting{{Name: "maxmemory-policy", Value: "noeviction"}}
	c.Masters = []topology.Master{{Name: "a", Address: s.Addr(), Username: "prober", Password: serverPassword}}
	p, err := NewProber(c)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })

	h := p.Probe(ctx)[0]
	assert.True(t, h.Reachable)
	assert.False(t, h.AuthFailed)
	assert.Contains(t, h.ConfigError, "NOPERM")
	assert.NotContains(t, h.ConfigError, serverPassword)
	assert.True(t, hasFinding(h, topology.SeverityWarning, topology.CodeConfigDenied), "%+v", h.Findings)
	assert.Equal(t, "master", h.Role, "INFO still read")
	assert.True(t, h.Healthy(time.Now()))
	plan := NewPlan(c, []topology.NodeHealth{h}, time.Now())
	assert.False(t, plan.Masters[0].Checked)
	assert.Equal(t, 1, plan.Summary.Unchecked)
	assert.Contains(t, p.Apply(ctx, plan)[0].Skipped, "CONFIG GET refused")
}

// BenchmarkProbe measures one probe of five local masters over warm connections,
// as the console does every second.
func BenchmarkProbe(b *testing.B) {
	cl := redistest.Start(b, 5, args())
	c := topology.NewCluster("bench")
	c.NodeTimeout = time.Second
	for _, s := range cl.Servers {
		c.Masters = append(c.Masters, topology.Master{Name: s.Name, Address: s.Addr()})
	}
	p, err := NewProber(c)
	require.NoError(b, err)
	defer p.Close()
	ctx := context.Background()
	for _, h := range p.Probe(ctx) {
		require.True(b, h.Reachable, h.Error)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.Probe(ctx)
	}
}
