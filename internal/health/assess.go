// Package health probes the declared masters of a lock cluster and judges what it
// sees: reachability, credentials, role, server mode, persistence, eviction policy,
// debug command, version, clock offset and the restart quarantine. The probe
// (Prober) does the I/O; Assess is the pure rule set that turns observed facts into
// findings, so the rules are tested without Redis. Plan and Apply converge the
// masters' CONFIG to the declared settings.
//
// The console, `nodes`, `plan` and `apply` all use this package, so they agree.
package health

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/redlock/redlock/internal/human"
	"github.com/redlock/redlock/topology"
)

// Assess fills h.Findings and h.QuarantineUntil from the facts in h (as a probe
// filled them) and the declared cluster c, as seen at now. It does no I/O and
// replaces any previous findings, so calling it twice gives the same result.
//
// Quarantine: when c.QuarantineWindow() is zero there is none and QuarantineUntil
// is cleared. Otherwise a master younger than the window is quarantined until
// now + window - uptime + 1s (INFO reports whole seconds, so one second is added,
// as the quorum package does before it lets the master vote again). A
// QuarantineUntil already in h (the prober sets it when the run_id changed) is kept
// when it is later. Findings are ordered errors first, then warnings, then info;
// within a severity they keep the order of the rules below.
func Assess(c *topology.Cluster, h *topology.NodeHealth, now time.Time) {
	h.Findings = nil
	window := c.QuarantineWindow()
	if window <= 0 {
		h.QuarantineUntil = time.Time{}
	}
	add := func(sev topology.Severity, code, summary, detail string) {
		f := topology.Finding{Severity: sev, Code: code, Summary: summary, Detail: detail}
		if ig := c.Acknowledged(code, h.Master); ig != nil && sev != topology.SeverityError {
			f.Acknowledged = ig.Reason
		}
		h.Findings = append(h.Findings, f)
	}
	defer func() {
		sort.SliceStable(h.Findings, func(i, j int) bool { return h.Findings[i].Severity > h.Findings[j].Severity })
	}()

	if !h.Reachable && notRedis(h.Error) {
		add(topology.SeverityError, topology.CodeNotRedis, "not a Redis server: "+h.Error,
			fmt.Sprintf("%s answers, but not in the Redis protocol (an HTTP server or a proxy?): check the address and port; the master does not vote", h.Address))
		quarantineFinding(h, now, add)
		return
	}
	if !h.Reachable && h.Slow {
		add(topology.SeverityError, topology.CodeSlow, fmt.Sprintf("slow: answered in %s, beyond the node timeout %s", human.Duration(h.Latency), human.Duration(c.NodeTimeout)),
			fmt.Sprintf("%s answers, but later than the node timeout: lock rounds give up on it, so it does not vote; find what slows it (load, network, a long command) or raise node_timeout", h.Address))
		quarantineFinding(h, now, add)
		return
	}
	if !h.Reachable {
		add(topology.SeverityError, topology.CodeUnreachable, "unreachable: "+orUnknown(h.Error),
			fmt.Sprintf("%s did not answer (node timeout %s); the master does not vote", h.Address, human.Duration(c.NodeTimeout)))
		quarantineFinding(h, now, add)
		return
	}
	if h.AuthFailed {
		add(topology.SeverityError, topology.CodeAuthFailed, "authentication failed: "+orUnknown(h.Error),
			"check username and password of this master in the topology file (the value is not shown)")
		quarantineFinding(h, now, add)
		return
	}

	if h.InfoError != "" {
		add(topology.SeverityWarning, topology.CodeInfoDenied, refusal("INFO", h.InfoError)+": role, uptime and version not checked",
			h.InfoError+refusalAdvice(h.InfoError, "grant +info to the user, or restart quarantine cannot work"))
	} else {
		assessInfo(c, h, add)
		if window > 0 && h.Uptime < window {
			until := now.Add(window - h.Uptime + time.Second)
			if until.After(h.QuarantineUntil) {
				h.QuarantineUntil = until
			}
		}
	}

	if h.ConfigError != "" {
		add(topology.SeverityWarning, topology.CodeConfigDenied, refusal("CONFIG GET", h.ConfigError)+": settings not checked",
			h.ConfigError+refusalAdvice(h.ConfigError, "use a read-only admin user with +config|get for plan and nodes"))
	} else {
		assessConfig(c, h, add)
	}

	if h.ClockUncertainty > 0 {
		budget := c.DriftBudget(c.TTL)
		off := h.ClockOffset
		if off < 0 {
			off = -off
		}
		if off-h.ClockUncertainty > budget {
			add(topology.SeverityWarning, topology.CodeClockOffset,
				fmt.Sprintf("clock offset %s (±%s) beyond the drift budget %s", human.Latency(h.ClockOffset), human.Latency(h.ClockUncertainty), human.Latency(budget)),
				"Redis expires keys by its wall clock: a master whose clock runs apart or jumps shortens or lengthens every lock on it; run NTP on the masters")
		}
	}
	quarantineFinding(h, now, add)
}

type addFunc func(sev topology.Severity, code, summary, detail string)

func assessInfo(c *topology.Cluster, h *topology.NodeHealth, add addFunc) {
	if h.Role != "" && h.Role != "master" {
		add(topology.SeverityError, topology.CodeReplica, "role:"+h.Role+": a replica cannot take locks",
			"declare only independent masters; REPLICAOF NO ONE turns it back into a master")
	}
	if h.Mode != "" && h.Mode != "standalone" {
		add(topology.SeverityError, topology.CodeServerMode, "redis_mode "+h.Mode+": not a standalone master",
			"Redlock needs independent standalone masters, not Sentinel or Cluster nodes")
	}
	if h.Replicas > 0 {
		add(topology.SeverityWarning, topology.CodeReplicasAttached,
			fmt.Sprintf("%d replica(s) attached: a failover can lose locks", h.Replicas),
			"replication is asynchronous: a promoted replica may lack a lock the master granted")
	}
	if h.AOFLastWriteStatus == "err" || h.RDBLastBgsaveStatus == "err" {
		add(topology.SeverityError, topology.CodePersistenceError,
			fmt.Sprintf("persistence write failing (aof_last_write_status:%s, rdb_last_bgsave_status:%s)", orUnknown(h.AOFLastWriteStatus), orUnknown(h.RDBLastBgsaveStatus)),
			"a restart would lose locks; check the master's disk and log")
	}
	if h.EvictedKeys > 0 {
		add(topology.SeverityWarning, topology.CodeKeysEvicted, fmt.Sprintf("%d keys evicted since start", h.EvictedKeys),
			"evictions under memory pressure may have removed lock keys")
	}
	switch h.ServerName() {
	case "redis", "valkey":
	default:
		add(topology.SeverityWarning, topology.CodeUnknownServer, "server "+h.ServerName()+" "+orUnknown(h.Version)+" is not known to support redlock",
			"redlock needs EVAL/EVALSHA Lua scripts, SET NX PX and pub/sub as Redis 6.2+ implements them; it is tested with Redis and Valkey only")
	}
	if cves := luaCVEs(h.Version); len(cves) > 0 && h.ServerName() == "redis" {
		add(topology.SeverityWarning, topology.CodeVulnerable, "redis "+h.Version+" has known Lua-engine CVEs",
			"unfixed in this release line: "+strings.Join(cves, ", ")+
				" (first fixed in 6.2.20, 7.2.11, 7.4.6, 8.0.4, 8.2.2; distribution packages may carry backports)")
	}
}

func assessConfig(c *topology.Cluster, h *topology.NodeHealth, add addFunc) {
	if p, ok := h.Config["maxmemory-policy"]; ok && (strings.HasPrefix(p, "allkeys-") || strings.HasPrefix(p, "volatile-")) {
		detail := "under memory pressure lock keys can be evicted and a second client can take a held lock; "
		if want, declared := c.Setting("maxmemory-policy"); declared && want == "noeviction" {
			detail += "apply sets noeviction as declared"
		} else {
			detail += `declare maxmemory_policy = "noeviction" in settings and run apply`
		}
		add(topology.SeverityError, topology.CodeEvictionPolicy, "maxmemory-policy "+p+" can evict lock keys", detail)
	}
	aof, haveAOF := h.Config["appendonly"]
	fsync := h.Config["appendfsync"]
	if !c.RestartQuarantine && haveAOF {
		switch {
		case aof != "yes":
			add(topology.SeverityWarning, topology.CodeWeakPersistence, "AOF off while restart quarantine is off",
				"a restart forgets every lock on this master and it votes again at once: two holders are possible")
		case fsync != "always":
			add(topology.SeverityWarning, topology.CodeWeakPersistence, "appendfsync "+fsync+" while restart quarantine is off",
				"a crash loses the last writes (locks) and the master votes again at once: two holders are possible")
		}
	}
	if haveAOF && (aof != "yes" || fsync != "always") && fencing(c) {
		add(topology.SeverityWarning, topology.CodeFencingFsync, "fencing configured without appendfsync always",
			"fence counters must survive a crash to stay strictly increasing: set appendonly yes and appendfsync always")
	}
	if d, ok := h.Config["enable-debug-command"]; ok && d != "no" {
		add(topology.SeverityWarning, topology.CodeDebugCommand, "enable-debug-command "+d,
			"DEBUG SLEEP and DEBUG RELOAD can stall or reset the master; set enable-debug-command no in its config file and restart it (Redis reads it only at startup)")
	}
	startupDrift(c, h, add)
}

// startupDrift adds a CodeStartupSetting warning for each declared setting that
// Redis reads only at startup and whose live value differs: apply cannot change it.
func startupDrift(c *topology.Cluster, h *topology.NodeHealth, add addFunc) {
	for _, s := range c.Settings {
		name := ConfigName(s.Name)
		have, ok := h.Config[name]
		if !ok || !topology.StartupSetting(name) || topology.SameSetting(name, have, s.Value) {
			continue
		}
		add(topology.SeverityWarning, topology.CodeStartupSetting, fmt.Sprintf("%s is %q, declared %q", name, have, s.Value),
			fmt.Sprintf("Redis reads %s only at startup (CONFIG SET refuses it): set it in the master's config file and restart it; apply does not change it", name))
	}
}

func quarantineFinding(h *topology.NodeHealth, now time.Time, add addFunc) {
	if now.Before(h.QuarantineUntil) {
		add(topology.SeverityInfo, topology.CodeQuarantined,
			fmt.Sprintf("quarantined until %s (%s left)", h.QuarantineUntil.Format(time.RFC3339), human.Duration(h.QuarantineUntil.Sub(now))),
			"restarted or younger than the quarantine window: it does not vote until then")
	}
}

func fencing(c *topology.Cluster) bool {
	for _, p := range c.Locks {
		if p.Fencing {
			return true
		}
	}
	return false
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// refusal says how a master turned a command down: "INFO refused" for an ACL
// refusal or another error, "INFO not implemented by this server" when the server
// does not know the command (an embedded or Redis-compatible server).
func refusal(command, msg string) string {
	if unknownCommand(msg) {
		return command + " not implemented by this server"
	}
	return command + " refused"
}

// refusalAdvice returns "; "+acl when msg is a permission refusal (NOPERM), what
// the server is when it does not know the command, and nothing otherwise: only a
// NOPERM reply means permissions.
func refusalAdvice(msg, acl string) string {
	switch {
	case strings.Contains(msg, "NOPERM"):
		return "; " + acl
	case unknownCommand(msg):
		return "; this server (an embedded or Redis-compatible one) does not implement it: nothing to grant"
	case notRedis(msg):
		return Advice(msg)
	}
	return ""
}

func unknownCommand(msg string) bool {
	return strings.Contains(strings.ToLower(msg), "unknown command")
}
