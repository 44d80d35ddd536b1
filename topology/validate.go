package topology

import (
	"fmt"
	"net"
	"path"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Validate checks the cluster against every rule that does not need the file's
// syntax: timing, quorum size, addresses, duplicates, policies and settings. It
// returns errors and warnings in a stable order; a nil result means no finding.
// It does not contact any master and does not check that TLS files exist.
func (c *Cluster) Validate() Problems {
	v := &validator{}
	v.cluster(c)
	v.masters(c)
	v.policies(c)
	v.settings(c)
	v.ignores(c)
	return v.ps
}

type validator struct{ ps Problems }

func (v *validator) add(sev Severity, summary, detail string, fields ...Field) {
	v.ps = append(v.ps, Problem{Severity: sev, Summary: summary, Detail: detail, Fields: fields})
}

func (v *validator) errorf(fields []Field, summary, format string, a ...any) {
	v.add(SeverityError, summary, fmt.Sprintf(format, a...), fields...)
}

func (v *validator) warnf(fields []Field, summary, format string, a ...any) {
	v.add(SeverityWarning, summary, fmt.Sprintf(format, a...), fields...)
}

// coded sets the finding code of the last problem added.
func (v *validator) coded(code string) { v.ps[len(v.ps)-1].Code = code }

func at(block, attr string) Field { return Field{Block: block, Attr: attr} }

func fs(f ...Field) []Field { return f }

func (v *validator) cluster(c *Cluster) {
	if c.KeyPrefix == "" {
		v.errorf(fs(at(BlockCluster, "key_prefix")), "Empty key prefix",
			"key_prefix must not be empty: every lock key is key_prefix + name, and an empty prefix mixes locks with other keys.")
	} else if r, bad := controlRune(c.KeyPrefix); bad {
		v.errorf(fs(at(BlockCluster, "key_prefix")), "Control character in key prefix",
			"key_prefix %q contains %U: control and invisible format characters (escape sequences, newlines, bidi overrides) in a key reach every terminal that shows it.", c.KeyPrefix, r)
	}
	ttlOK := true
	if c.MaxTTL <= 0 {
		v.errorf(fs(at(BlockCluster, "max_ttl")), "Invalid max_ttl", "max_ttl must be positive, got %v.", c.MaxTTL)
	}
	switch {
	case c.TTL <= 0:
		ttlOK = false
		v.errorf(fs(at(BlockCluster, "ttl")), "Invalid ttl", "ttl must be positive, got %v.", c.TTL)
	case c.MaxTTL > 0 && c.TTL > c.MaxTTL:
		v.errorf(fs(at(BlockCluster, "ttl"), at(BlockCluster, "max_ttl")), "ttl above max_ttl",
			"ttl %v is greater than max_ttl %v; no lock may ask for more than max_ttl.", c.TTL, c.MaxTTL)
	}
	if c.NodeTimeout <= 0 {
		v.errorf(fs(at(BlockCluster, "node_timeout")), "Invalid node_timeout", "node_timeout must be positive, got %v.", c.NodeTimeout)
	} else if ttlOK {
		if c.NodeTimeout >= c.TTL {
			v.errorf(fs(at(BlockCluster, "node_timeout"), at(BlockCluster, "ttl")), "node_timeout not below ttl",
				"node_timeout %v must be less than ttl %v: a round waiting that long leaves no validity.", c.NodeTimeout, c.TTL)
		} else if c.NodeTimeout > c.TTL/10 {
			v.warnf(fs(at(BlockCluster, "node_timeout"), at(BlockCluster, "ttl")), "node_timeout large against ttl",
				"node_timeout %v is more than a tenth of ttl %v: a slow master eats most of the lock's validity.", c.NodeTimeout, c.TTL)
		}
	}
	driftOK := true
	if c.Drift.Factor < 0 || c.Drift.Factor >= MaxDriftFactor || c.Drift.Factor != c.Drift.Factor {
		driftOK = false
		v.errorf(fs(at(BlockDrift, "factor")), "Drift factor out of range", "drift factor must be in [0, %v), got %v.", MaxDriftFactor, c.Drift.Factor)
	}
	if c.Drift.Extra < 0 {
		driftOK = false
		v.errorf(fs(at(BlockDrift, "extra")), "Invalid drift extra", "drift extra must not be negative, got %v.", c.Drift.Extra)
	}
	if driftOK && ttlOK {
		if b := c.Drift.Budget(c.TTL); b >= c.TTL {
			v.errorf(fs(at(BlockDrift, "extra"), at(BlockDrift, "factor"), at(BlockCluster, "ttl")), "Drift budget not below ttl",
				"the drift budget ttl*factor + extra = %v is not less than ttl %v: no lock would ever be valid.", b, c.TTL)
		}
	}
	if c.Retry.Attempts < 1 {
		v.errorf(fs(at(BlockRetry, "attempts")), "Invalid retry attempts", "attempts must be at least 1, got %d.", c.Retry.Attempts)
	}
	if c.Retry.Delay <= 0 {
		v.errorf(fs(at(BlockRetry, "delay")), "Invalid retry delay", "delay must be positive, got %v.", c.Retry.Delay)
	} else if c.Retry.Jitter < 0 || c.Retry.Jitter > c.Retry.Delay {
		v.errorf(fs(at(BlockRetry, "jitter"), at(BlockRetry, "delay")), "Retry jitter out of range",
			"jitter must be in [0, delay %v], got %v.", c.Retry.Delay, c.Retry.Jitter)
	}
}

// controlRune returns the first control character (C0, DEL, C1), invisible format
// character (bidi controls and the like) or invalid UTF-8 byte of s.
func controlRune(s string) (rune, bool) {
	for i, r := range s {
		if r == utf8.RuneError && !strings.HasPrefix(s[i:], string(utf8.RuneError)) {
			return rune(s[i]), true
		}
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return r, true
		}
	}
	return 0, false
}

// canonicalAddress returns one spelling per server address of a valid host:port:
// host names lower case without a trailing dot, IP addresses in their shortest
// form, the port as a number, and every spelling of the loopback host (localhost,
// 127.0.0.1, ::1, ::ffff:127.0.0.1) as one, since localhost resolves to both.
func canonicalAddress(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return strings.ToLower(addr)
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if ip := net.ParseIP(host); ip != nil {
		host = ip.String()
		if ip.Equal(net.IPv4(127, 0, 0, 1)) || ip.Equal(net.IPv6loopback) {
			host = "localhost"
		}
	}
	if n, err := strconv.Atoi(port); err == nil {
		port = strconv.Itoa(n)
	}
	return net.JoinHostPort(host, port)
}

// checkAddress returns why addr is not host:port, or "".
func checkAddress(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Sprintf("%q is not host:port (e.g. \"10.0.0.11:6379\")", addr)
	}
	if host == "" {
		return fmt.Sprintf("%q has no host (e.g. \"127.0.0.1:6379\")", addr)
	}
	if strings.ContainsAny(host, " \t/") {
		return fmt.Sprintf("%q has an invalid host", addr)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return fmt.Sprintf("%q has an invalid port %q: want a number from 1 to 65535", addr, port)
	}
	return ""
}

func (v *validator) masters(c *Cluster) {
	n := len(c.Masters)
	switch {
	case n == 0:
		v.errorf(fs(at(BlockCluster, "")), "No master", "the cluster declares no master block; Redlock needs independent masters, ideally 5.")
		return
	case n < 3:
		v.warnf(fs(Field{Block: BlockMaster, Index: n - 1}), "Fewer than 3 masters",
			"%d master(s): Redlock tolerates no failure below 3 masters; 5 is the usual choice.", n)
	}
	if n%2 == 0 {
		v.warnf(fs(Field{Block: BlockMaster, Index: n - 1}), "Even number of masters",
			"%d masters need a quorum of %d and tolerate %d failed master(s), no more than %d masters do; use an odd number.", n, n/2+1, n-(n/2+1), n-1)
	}
	names := map[string]int{}
	addrs := map[string]int{}
	for i, m := range c.Masters {
		f := func(attr string) Field { return Field{Block: BlockMaster, Index: i, Attr: attr} }
		if m.Name == "" {
			v.errorf(fs(f("")), "Empty master name", "a master block needs a non-empty name label.")
		} else if j, dup := names[m.Name]; dup {
			v.errorf(fs(f("")), "Duplicate master name",
				"master %q is declared twice (first as master number %d); each master needs its own name.", m.Name, j+1)
		} else {
			names[m.Name] = i
		}
		if m.Address == "" {
			v.errorf(fs(f("address"), f("")), "Missing address", "master %q has no address; write address = \"host:port\".", m.Name)
		} else if why := checkAddress(m.Address); why != "" {
			v.errorf(fs(f("address")), "Invalid address", "master %q: %s.", m.Name, why)
		} else {
			key := canonicalAddress(m.Address)
			if j, dup := addrs[key]; dup {
				same := m.Address
				if other := c.Masters[j].Address; other != m.Address {
					same = fmt.Sprintf("%s (%s spelt another way)", m.Address, other)
				}
				v.errorf(fs(f("address")), "Duplicate master address",
					"master %q has the same address %s as master %q; a Redis server counted twice breaks the quorum.", m.Name, same, c.Masters[j].Name)
			} else {
				addrs[key] = i
			}
		}
		if m.DB < 0 {
			v.errorf(fs(f("db")), "Invalid db", "master %q: db must not be negative, got %d.", m.Name, m.DB)
		}
		if m.TLS != nil && (m.TLS.CertFile == "") != (m.TLS.KeyFile == "") {
			v.errorf(fs(f("tls.cert_file"), f("tls.key_file"), f("tls")), "Incomplete client certificate",
				"master %q: cert_file and key_file go together; set both or neither.", m.Name)
		}
	}
}

func (v *validator) policies(c *Cluster) {
	fencing := -1
	seen := map[string]int{}
	for i, p := range c.Locks {
		f := func(attr string) Field { return Field{Block: BlockLock, Index: i, Attr: attr} }
		if p.Match == "" {
			v.errorf(fs(f("")), "Empty lock pattern", "a lock block needs a glob label such as \"billing/*\".")
		} else if _, err := path.Match(p.Match, ""); err != nil {
			v.errorf(fs(f("")), "Invalid lock pattern", "%q is not a valid glob (path.Match syntax: *, ?, [a-z], \\ escapes).", p.Match)
		} else if j, dup := seen[p.Match]; dup {
			v.warnf(fs(f("")), "Duplicate lock pattern", "lock %q is declared twice; the first (number %d) wins and this one never applies.", p.Match, j+1)
		} else {
			seen[p.Match] = i
		}
		switch {
		case p.TTL < 0:
			v.errorf(fs(f("ttl")), "Invalid lock ttl", "lock %q: ttl must be positive, got %v.", p.Match, p.TTL)
		case p.TTL > 0 && c.MaxTTL > 0 && p.TTL > c.MaxTTL:
			v.errorf(fs(f("ttl")), "Lock ttl above max_ttl", "lock %q: ttl %v is greater than the cluster's max_ttl %v.", p.Match, p.TTL, c.MaxTTL)
		case p.TTL > 0 && c.Drift.Factor >= 0 && c.Drift.Factor < MaxDriftFactor && c.Drift.Budget(p.TTL) >= p.TTL:
			v.errorf(fs(f("ttl")), "Drift budget not below lock ttl",
				"lock %q: the drift budget %v is not less than its ttl %v: the lock would never be valid.", p.Match, c.Drift.Budget(p.TTL), p.TTL)
		case p.TTL > 0 && c.NodeTimeout >= p.TTL:
			v.errorf(fs(f("ttl")), "Lock ttl not above node_timeout", "lock %q: ttl %v must be greater than node_timeout %v.", p.Match, p.TTL, c.NodeTimeout)
		}
		if p.MaxExtensions < 0 {
			v.errorf(fs(f("max_extensions")), "Invalid max_extensions", "lock %q: max_extensions must not be negative, got %d.", p.Match, p.MaxExtensions)
		}
		if p.Permits < 0 || p.Permits > MaxPermits {
			v.errorf(fs(f("permits")), "Invalid permits", "lock %q: permits must be in 1..%d (0 or absent: a plain lock), got %d.", p.Match, MaxPermits, p.Permits)
		}
		if p.Fencing && fencing < 0 {
			fencing = i
		}
	}
	if fencing >= 0 {
		if fsync, _ := c.Setting("appendfsync"); fsync != "always" {
			v.warnf(fs(Field{Block: BlockLock, Index: fencing, Attr: "fencing"}), "Fencing without appendfsync always",
				"lock %q uses fencing, but settings do not declare appendfsync = \"always\": a master restart can lose fence counters and hand out a number twice.", c.Locks[fencing].Match)
			v.coded(CodeFencingFsync)
		}
	}
}

// settingName reports whether s looks like a Redis CONFIG parameter name.
func settingName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// SettingAttr returns the attribute name of a Redis CONFIG name in the file
// ("maxmemory-policy" -> "maxmemory_policy").
func SettingAttr(name string) string { return strings.ReplaceAll(name, "-", "_") }

// SettingName returns the Redis CONFIG name of a settings attribute
// ("maxmemory_policy" -> "maxmemory-policy").
func SettingName(attr string) string { return strings.ReplaceAll(attr, "_", "-") }

// knownAttrs returns the known settings as the file writes them, sorted.
func knownAttrs() []string {
	out := KnownSettings()
	for i := range out {
		out[i] = SettingAttr(out[i])
	}
	return out
}

func (v *validator) settings(c *Cluster) {
	seen := map[string]bool{}
	for _, s := range c.Settings {
		f := fs(at(BlockSettings, SettingAttr(s.Name)), at(BlockSettings, ""))
		if !settingName(s.Name) {
			v.errorf(f, "Invalid setting name", "%q is not a Redis configuration parameter name (lower case letters, digits and '_').", SettingAttr(s.Name))
			continue
		}
		if seen[s.Name] {
			v.errorf(f, "Duplicate setting", "%s is declared twice.", SettingAttr(s.Name))
		}
		seen[s.Name] = true
		switch {
		case !KnownSetting(s.Name):
			v.errorf(f, "Unknown setting", "%s is not a setting this tool knows; the known settings are: %s.", SettingAttr(s.Name), strings.Join(knownAttrs(), ", "))
		case CheckSetting(s.Name, s.Value) != "":
			v.errorf(f, "Invalid setting value", "%s.", CheckSetting(s.Name, s.Value))
		case UnsafeSetting(s.Name, s.Value) != "":
			v.errorf(f, "Setting breaks lock safety", "%s. apply never sets it.", UnsafeSetting(s.Name, s.Value))
		}
	}
	if c.RestartQuarantine {
		return
	}
	if fsync, ok := c.Setting("appendfsync"); ok && fsync != "always" {
		v.warnf(fs(at(BlockSettings, "appendfsync"), at(BlockCluster, "restart_quarantine")), "appendfsync without restart quarantine",
			"appendfsync = %q with restart_quarantine = false: a master that restarts can forget acknowledged locks and vote for a second holder at once. Use \"always\" or keep the quarantine.", fsync)
		v.coded(CodeWeakPersistence)
	} else if aof, ok := c.Setting("appendonly"); ok && aof != "yes" {
		v.warnf(fs(at(BlockSettings, "appendonly"), at(BlockCluster, "restart_quarantine")), "No persistence without restart quarantine",
			"appendonly = %q with restart_quarantine = false: a master that restarts forgets every lock and can vote for a second holder at once.", aof)
		v.coded(CodeWeakPersistence)
	}
}
