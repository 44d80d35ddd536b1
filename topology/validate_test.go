package topology_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/quorum"
	"github.com/redlock/redlock/topology"
)

func valid() *topology.Cluster {
	c := topology.NewCluster("t")
	for i := 1; i <= 5; i++ {
		c.Masters = append(c.Masters, topology.Master{Name: fmt.Sprintf("m%d", i), Address: fmt.Sprintf("127.0.0.1:%d", 7000+i)})
	}
	return c
}

func TestValidate(t *testing.T) {
	type want struct {
		sev     topology.Severity
		summary string
		field   string
	}
	E, W := topology.SeverityError, topology.SeverityWarning
	tests := []struct {
		name   string
		mutate func(c *topology.Cluster)
		want   []want
	}{
		{name: "valid", mutate: func(c *topology.Cluster) {}},
		{name: "empty prefix", mutate: func(c *topology.Cluster) { c.KeyPrefix = "" }, want: []want{{E, "Empty key prefix", "cluster.key_prefix"}}},
		{name: "ttl zero", mutate: func(c *topology.Cluster) { c.TTL = 0 }, want: []want{{E, "Invalid ttl", "cluster.ttl"}}},
		{name: "ttl negative", mutate: func(c *topology.Cluster) { c.TTL = -time.Second }, want: []want{{E, "Invalid ttl", "cluster.ttl"}}},
		{name: "ttl above max", mutate: func(c *topology.Cluster) { c.TTL = 10 * time.Minute }, want: []want{{E, "ttl above max_ttl", "cluster.ttl"}}},
		{name: "ttl equal max", mutate: func(c *topology.Cluster) { c.TTL = c.MaxTTL }},
		{name: "max ttl zero", mutate: func(c *topology.Cluster) { c.MaxTTL = 0 }, want: []want{{E, "Invalid max_ttl", "cluster.max_ttl"}}},
		{name: "node timeout equal ttl", mutate: func(c *topology.Cluster) { c.NodeTimeout = c.TTL }, want: []want{{E, "node_timeout not below ttl", "cluster.node_timeout"}}},
		{name: "node timeout large", mutate: func(c *topology.Cluster) { c.NodeTimeout = c.TTL/10 + 1 }, want: []want{{W, "node_timeout large against ttl", "cluster.node_timeout"}}},
		{name: "node timeout tenth", mutate: func(c *topology.Cluster) { c.NodeTimeout = c.TTL / 10 }},
		{name: "node timeout zero", mutate: func(c *topology.Cluster) { c.NodeTimeout = 0 }, want: []want{{E, "Invalid node_timeout", "cluster.node_timeout"}}},
		{name: "drift factor half", mutate: func(c *topology.Cluster) { c.Drift.Factor = 0.5 }, want: []want{{E, "Drift factor out of range", "drift.factor"}}},
		{name: "drift factor negative", mutate: func(c *topology.Cluster) { c.Drift.Factor = -0.1 }, want: []want{{E, "Drift factor out of range", "drift.factor"}}},
		{name: "drift budget equals ttl", mutate: func(c *topology.Cluster) {
			c.TTL = time.Second
			c.Drift = topology.Drift{Factor: 0, Extra: time.Second}
		},
			want: []want{{E, "Drift budget not below ttl", "drift.extra"}}},
		{name: "drift extra negative", mutate: func(c *topology.Cluster) { c.Drift.Extra = -1 }, want: []want{{E, "Invalid drift extra", "drift.extra"}}},
		{name: "retry attempts", mutate: func(c *topology.Cluster) { c.Retry.Attempts = 0 }, want: []want{{E, "Invalid retry attempts", "retry.attempts"}}},
		{name: "retry delay", mutate: func(c *topology.Cluster) { c.Retry.Delay = 0 }, want: []want{{E, "Invalid retry delay", "retry.delay"}}},
		{name: "retry jitter above delay", mutate: func(c *topology.Cluster) { c.Retry.Jitter = c.Retry.Delay + 1 }, want: []want{{E, "Retry jitter out of range", "retry.jitter"}}},
		{name: "no master", mutate: func(c *topology.Cluster) { c.Masters = nil }, want: []want{{E, "No master", "cluster"}}},
		{name: "one master", mutate: func(c *topology.Cluster) { c.Masters = c.Masters[:1] }, want: []want{{W, "Fewer than 3 masters", "master[0]"}}},
		{name: "two masters", mutate: func(c *topology.Cluster) { c.Masters = c.Masters[:2] },
			want: []want{{W, "Fewer than 3 masters", "master[1]"}, {W, "Even number of masters", "master[1]"}}},
		{name: "four masters", mutate: func(c *topology.Cluster) { c.Masters = c.Masters[:4] }, want: []want{{W, "Even number of masters", "master[3]"}}},
		{name: "duplicate name", mutate: func(c *topology.Cluster) { c.Masters[3].Name = "m1" }, want: []want{{E, "Duplicate master name", "master[3]"}}},
		{name: "duplicate address", mutate: func(c *topology.Cluster) { c.Masters[4].Address = "127.0.0.1:7002" }, want: []want{{E, "Duplicate master address", "master[4].address"}}},
		{name: "duplicate address case", mutate: func(c *topology.Cluster) {
			c.Masters[0].Address = "Redis-A:6379"
			c.Masters[1].Address = "redis-a:6379"
		}, want: []want{{E, "Duplicate master address", "master[1].address"}}},
		{name: "missing address", mutate: func(c *topology.Cluster) { c.Masters[2].Address = "" }, want: []want{{E, "Missing address", "master[2].address"}}},
		{name: "no port", mutate: func(c *topology.Cluster) { c.Masters[2].Address = "redis" }, want: []want{{E, "Invalid address", "master[2].address"}}},
		{name: "no host", mutate: func(c *topology.Cluster) { c.Masters[2].Address = ":6379" }, want: []want{{E, "Invalid address", "master[2].address"}}},
		{name: "bad port", mutate: func(c *topology.Cluster) { c.Masters[2].Address = "redis:0" }, want: []want{{E, "Invalid address", "master[2].address"}}},
		{name: "ipv6", mutate: func(c *topology.Cluster) { c.Masters[2].Address = "[::1]:6379" }},
		{name: "negative db", mutate: func(c *topology.Cluster) { c.Masters[0].DB = -1 }, want: []want{{E, "Invalid db", "master[0].db"}}},
		{name: "cert without key", mutate: func(c *topology.Cluster) { c.Masters[0].TLS = &topology.TLS{CertFile: "c.pem"} },
			want: []want{{E, "Incomplete client certificate", "master[0].tls.cert_file"}}},
		{name: "bad glob", mutate: func(c *topology.Cluster) { c.Locks = []topology.Policy{{Match: "a/[b"}} }, want: []want{{E, "Invalid lock pattern", "lock[0]"}}},
		{name: "duplicate glob", mutate: func(c *topology.Cluster) { c.Locks = []topology.Policy{{Match: "a/*"}, {Match: "a/*"}} },
			want: []want{{W, "Duplicate lock pattern", "lock[1]"}}},
		{name: "policy ttl above max", mutate: func(c *topology.Cluster) { c.Locks = []topology.Policy{{Match: "a/*", TTL: time.Hour}} },
			want: []want{{E, "Lock ttl above max_ttl", "lock[0].ttl"}}},
		{name: "policy ttl below drift", mutate: func(c *topology.Cluster) { c.Locks = []topology.Policy{{Match: "a/*", TTL: time.Millisecond}} },
			want: []want{{E, "Drift budget not below lock ttl", "lock[0].ttl"}}},
		{name: "policy ttl below node timeout", mutate: func(c *topology.Cluster) { c.Locks = []topology.Policy{{Match: "a/*", TTL: 40 * time.Millisecond}} },
			want: []want{{E, "Lock ttl not above node_timeout", "lock[0].ttl"}}},
		{name: "negative extensions", mutate: func(c *topology.Cluster) { c.Locks = []topology.Policy{{Match: "a/*", MaxExtensions: -1}} },
			want: []want{{E, "Invalid max_extensions", "lock[0].max_extensions"}}},
		{name: "negative permits", mutate: func(c *topology.Cluster) { c.Locks = []topology.Policy{{Match: "a/*", Permits: -1}} },
			want: []want{{E, "Invalid permits", "lock[0].permits"}}},
		{name: "too many permits", mutate: func(c *topology.Cluster) {
			c.Locks = []topology.Policy{{Match: "a/*", Permits: topology.MaxPermits + 1}}
		},
			want: []want{{E, "Invalid permits", "lock[0].permits"}}},
		{name: "permits", mutate: func(c *topology.Cluster) { c.Locks = []topology.Policy{{Match: "a/*", Permits: 3}} }},
		{name: "fencing without always", mutate: func(c *topology.Cluster) { c.Locks = []topology.Policy{{Match: "a", Fencing: true}} },
			want: []want{{W, "Fencing without appendfsync always", "lock[0].fencing"}}},
		{name: "fencing with always", mutate: func(c *topology.Cluster) {
			c.Locks = []topology.Policy{{Match: "a", Fencing: true}}
			c.Settings = []topology.Setting{{Name: "appendfsync", Value: "always"}}
		}},
		{name: "everysec without quarantine", mutate: func(c *topology.Cluster) {
			c.RestartQuarantine = false
			c.Settings = []topology.Setting{{Name: "appendfsync", Value: "everysec"}}
		}, want: []want{{W, "appendfsync without restart quarantine", "settings.appendfsync"}}},
		{name: "everysec with quarantine", mutate: func(c *topology.Cluster) { c.Settings = []topology.Setting{{Name: "appendfsync", Value: "everysec"}} }},
		{name: "no aof without quarantine", mutate: func(c *topology.Cluster) {
			c.RestartQuarantine = false
			c.Settings = []topology.Setting{{Name: "appendonly", Value: "no"}}
		}, want: []want{{W, "No persistence without restart quarantine", "settings.appendonly"}}},
		{name: "bad setting name", mutate: func(c *topology.Cluster) { c.Settings = []topology.Setting{{Name: "Max Memory", Value: "1"}} },
			want: []want{{E, "Invalid setting name", "settings.Max Memory"}}},
		{name: "duplicate setting", mutate: func(c *topology.Cluster) {
			c.Settings = []topology.Setting{{Name: "hz", Value: "10"}, {Name: "hz", Value: "20"}}
		}, want: []want{{E, "Duplicate setting", "settings.hz"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := valid()
			tt.mutate(c)
			ps := c.Validate()
			var got []want
			for _, p := range ps {
				require.NotEmpty(t, p.Fields)
				got = append(got, want{p.Severity, p.Summary, p.Fields[0].String()})
				assert.NotEmpty(t, p.Detail)
			}
			assert.Equal(t, tt.want, got)
			wantErr := false
			for _, w := range tt.want {
				wantErr = wantErr || w.sev == topology.SeverityError
			}
			assert.Equal(t, wantErr, ps.HasErrors())
		})
	}
}

// TestValidClusterBuildsManager checks that what Validate accepts, the library accepts.
func TestValidClusterBuildsManager(t *testing.T) {
	c := valid()
	require.Empty(t, c.Validate())
	nodes := make([]quorum.Node, 0, len(c.Masters))
	for _, m := range c.Masters {
		nodes = append(nodes, quorum.Node{Name: m.Name, Addr: m.Address})
	}
	m, err := quorum.New(nodes, quorum.WithKeyPrefix(c.KeyPrefix), quorum.WithNodeTimeout(c.NodeTimeout),
		quorum.WithDrift(c.Drift.Factor, c.Drift.Extra), quorum.WithMaxTTL(c.MaxTTL),
		quorum.WithRetry(c.Retry.Attempts, c.Retry.Delay, c.Retry.Jitter))
	require.NoError(t, err)
	require.NoError(t, m.Close())
}

func TestPolicyFor(t *testing.T) {
	c := valid()
	c.Locks = []topology.Policy{
		{Match: "billing/*", TTL: 10 * time.Second, Fair: true, Fencing: true, MaxExtensions: 20},
		{Match: "billing/special", TTL: time.Second}, // shadowed: first match wins
		{Match: "reports/[0-9]*", MaxExtensions: 3},
		{Match: "exact"},
	}
	tests := []struct {
		name string
		want topology.Policy
	}{
		{"billing/42", topology.Policy{Match: "billing/*", TTL: 10 * time.Second, Fair: true, Fencing: true, MaxExtensions: 20}},
		{"billing/special", topology.Policy{Match: "billing/*", TTL: 10 * time.Second, Fair: true, Fencing: true, MaxExtensions: 20}},
		{"billing/a/b", topology.Policy{TTL: c.TTL}}, // * does not cross '/'
		{"reports/7x", topology.Policy{Match: "reports/[0-9]*", TTL: c.TTL, MaxExtensions: 3}},
		{"reports/x7", topology.Policy{TTL: c.TTL}},
		{"exact", topology.Policy{Match: "exact", TTL: c.TTL}},
		{"exactly", topology.Policy{TTL: c.TTL}},
		{"", topology.Policy{TTL: c.TTL}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, c.PolicyFor(tt.name))
		})
	}
}

func TestSettingNames(t *testing.T) {
	assert.Equal(t, "maxmemory-policy", topology.SettingName("maxmemory_policy"))
	assert.Equal(t, "maxmemory_policy", topology.SettingAttr("maxmemory-policy"))
}

func TestProblemError(t *testing.T) {
	c := valid()
	c.Masters[1].Address = "nope"
	ps := c.Validate()
	require.Len(t, ps, 1)
	assert.Equal(t, `master[1].address: Invalid address: master "m2": "nope" is not host:port (e.g. "10.0.0.11:6379").`, ps[0].Error())
}
