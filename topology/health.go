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
	Code     string   `json:"code"`
	Summary  string   `json:"summary"`
	Detail   string   `json:"detail,omitempty"`
}

// NodeState is the one-word state of a master as the console and `nodes` show it.
type NodeState string

// Node states.
const (
	StateUp          NodeState = "up"
	StateDown        NodeState = "down"
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
	// Error is the connection or auth error, with no secret in it.
	Error   string        `json:"error,omitempty"`
	Latency time.Duration `json:"latency_ns"`
	Role    string        `json:"role,omitempty"`
	Mode    string        `json:"mode,omitempty"`
	Version string        `json:"version,omitempty"`
	RunID   string        `json:"run_id,omitempty"`
	Uptime  time.Duration `json:"uptime_ns"`
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
	EvictedKeys int64             `json:"evicted_keys"`
	CheckedAt   time.Time         `json:"checked_at"`
	Findings    []Finding         `json:"findings,omitempty"`
}

// State summarises the health in one word.
func (h *NodeHealth) State(now time.Time) NodeState {
	switch {
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
