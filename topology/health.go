package topology

import "time"

// Severity ranks a finding about a master.
type Severity int

// Severities, from least to most serious.
const (
	SeverityInfo Severity = iota
	SeverityWarning
	SeverityError
)

// String returns "info", "warning" or "error".
func (s Severity) String() string {
	switch s {
	case SeverityWarning:
		return "warning"
	case SeverityError:
		return "error"
	default:
		return "info"
	}
}

// MarshalText makes a Severity encode as its name in JSON.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Finding is one observation about a live master, with a stable machine-readable Code
// ("unreachable", "eviction-policy", ...). Summary and Detail never contain secrets.
type Finding struct {
	Severity Severity `json:"severity"`
	// Acknowledged is the reason an ignore block gives for living with this
	// finding; the finding is still shown, and no longer counts as a warning.
	Acknowledged string `json:"acknowledged,omitempty"`
	Code         string `json:"code"`
	Summary      string `json:"summary"`
	Detail       string `json:"detail,omitempty"`
	// Fixable is true when a pending change of a declared setting (one that apply
	// makes) removes the cause: plan counts it as a change, not as a failure.
	Fixable bool `json:"fixable"`
}

// Stable finding codes. Scripts match on them; they never change meaning.
const (
	// Errors: the master must not be trusted with locks as it is.
	CodeUnreachable      = "unreachable"       // no answer within the node timeout
	CodeSlow             = "slow"              // answers, but later than the node timeout: it cannot vote
	CodeNotRedis         = "not-redis"         // the address answers, but not in the Redis protocol
	CodeAuthFailed       = "auth-failed"       // the server refused the credentials
	CodeReplica          = "replica"           // role:slave: cannot take locks
	CodeServerMode       = "server-mode"       // redis_mode sentinel or cluster
	CodeEvictionPolicy   = "eviction-policy"   // allkeys-* or volatile-*: lock keys can be evicted
	CodePersistenceError = "persistence-error" // the last AOF write or RDB save failed
	// Warnings: safe today under assumptions worth knowing.
	CodeReplicasAttached = "replicas-attached"  // a failover can promote a replica that lacks a lock
	CodeWeakPersistence  = "weak-persistence"   // a restart can forget locks and the quarantine is off
	CodeFencingFsync     = "fencing-fsync"      // fencing counters need appendfsync always
	CodeDebugCommand     = "debug-command"      // DEBUG can sleep or reload the master
	CodeClockOffset      = "clock-offset"       // TIME differs from the local clock beyond the drift budget
	CodeVulnerable       = "vulnerable-version" // known Lua-engine CVEs for this version
	CodeKeysEvicted      = "keys-evicted"       // the master has evicted keys since it started
	CodeConfigDenied     = "config-denied"      // CONFIG GET refused: settings not checked
	CodeInfoDenied       = "info-denied"        // INFO refused: role, uptime and version not checked
	CodeUnknownServer    = "unknown-server"     // a server (server_name) not known to support the scripts and pub/sub used
	CodeStartupSetting   = "startup-setting"    // a declared setting differs that Redis reads only at startup: apply cannot change it
	// Info.
	CodeQuarantined = "quarantined" // restarted or young: no vote until QuarantineUntil
)

// NodeState is the one-word state of a master as the console and `nodes` show it.
type NodeState string

// Node states.
const (
	StateUp          NodeState = "up"
	StateDown        NodeState = "down"
	StateSlow        NodeState = "slow" // answers, later than the node timeout: no vote
	StateQuarantined NodeState = "quarantined"
	StateDegraded    NodeState = "degraded" // reachable, but an error finding keeps it from being safe
)

// NodeHealth is what one probe learned about one master. The probe fills the
// observed facts; Findings are derived from them and the declared cluster.
type NodeHealth struct {
	Master  string `json:"master"`
	Address string `json:"address"`
	// Reachable is false when the master did not answer PING within the node timeout.
	Reachable bool `json:"reachable"`
	// Slow is true when it did answer, later (Latency says when): a lock round
	// gives up on it first, so it does not vote; it is not down either.
	Slow bool `json:"slow,omitempty"`
	// Error is the connection or auth error, with no secret in it.
	Error string `json:"error,omitempty"`
	// AuthFailed is true when the master answered but refused the credentials
	// (WRONGPASS, NOAUTH); Reachable is then true and Error says why.
	AuthFailed bool          `json:"auth_failed,omitempty"`
	Latency    time.Duration `json:"latency_ns"`
	Role       string        `json:"role,omitempty"`
	Mode       string        `json:"mode,omitempty"`
	Version    string        `json:"version,omitempty"`
	// Server is the server software: "redis" (the default), "valkey", "dragonfly",
	// "keydb", or what INFO's server_name says; Version is that software's version.
	Server string        `json:"server,omitempty"`
	RunID  string        `json:"run_id,omitempty"`
	Uptime time.Duration `json:"uptime_ns"`
	// Replicas is connected_slaves from INFO replication.
	Replicas int `json:"replicas"`
	// QuarantineUntil is when a restarted or young master may vote again; zero when it may vote now.
	QuarantineUntil time.Time `json:"quarantine_until,omitempty"`
	// ClockOffset is the master's TIME minus the local clock at the middle of the round trip;
	// ClockUncertainty is half the round trip.
	ClockOffset      time.Duration `json:"clock_offset_ns"`
	ClockUncertainty time.Duration `json:"clock_uncertainty_ns"`
	// Config holds CONFIG GET results for the settings of interest; ConfigError is set when
	// the user may not read them (that is not a failure of the master).
	Config      map[string]string `json:"config,omitempty"`
	ConfigError string            `json:"config_error,omitempty"`
	// InfoError is set when INFO could not be read (NOPERM): Role, Mode, Version,
	// RunID, Uptime and the persistence status are then unknown.
	InfoError   string `json:"info_error,omitempty"`
	EvictedKeys int64  `json:"evicted_keys"`
	// AOFLastWriteStatus and RDBLastBgsaveStatus are from INFO persistence ("ok" or
	// "err"); empty when INFO could not be read.
	AOFLastWriteStatus  string    `json:"aof_last_write_status,omitempty"`
	RDBLastBgsaveStatus string    `json:"rdb_last_bgsave_status,omitempty"`
	CheckedAt           time.Time `json:"checked_at"`
	Findings            []Finding `json:"findings,omitempty"`
}

// State summarises the health in one word.
func (h *NodeHealth) State(now time.Time) NodeState {
	switch {
	case !h.Reachable && h.Slow:
		return StateSlow
	case !h.Reachable:
		return StateDown
	case h.hasError():
		return StateDegraded
	case now.Before(h.QuarantineUntil):
		return StateQuarantined
	default:
		return StateUp
	}
}

// Healthy reports whether the master can vote now: reachable, no error finding,
// not quarantined.
func (h *NodeHealth) Healthy(now time.Time) bool { return h.State(now) == StateUp }

func (h *NodeHealth) hasError() bool {
	for _, f := range h.Findings {
		if f.Severity == SeverityError {
			return true
		}
	}
	return false
}

// Persistence summarises how the master keeps its data, from CONFIG GET and INFO
// persistence: "aof always", "aof everysec", "aof no", "rdb", "none", with " (write
// error)" appended when the last write failed, or "?" when the settings are unknown.
func (h *NodeHealth) Persistence() string {
	aof, okAOF := h.Config["appendonly"]
	var s string
	switch {
	case !okAOF:
		s = "?"
	case aof == "yes":
		s = "aof " + h.Config["appendfsync"]
		if h.Config["appendfsync"] == "" {
			s = "aof"
		}
	case h.Config["save"] != "":
		s = "rdb"
	default:
		s = "none"
	}
	if h.AOFLastWriteStatus == "err" || h.RDBLastBgsaveStatus == "err" {
		s += " (write error)"
	}
	return s
}

// EvictionPolicy returns maxmemory-policy as read from the master, or "?" when unknown.
func (h *NodeHealth) EvictionPolicy() string {
	if p, ok := h.Config["maxmemory-policy"]; ok {
		return p
	}
	return "?"
}

// ServerName returns Server, or "redis" when INFO named no other server.
func (h *NodeHealth) ServerName() string {
	if h.Server == "" {
		return "redis"
	}
	return h.Server
}
