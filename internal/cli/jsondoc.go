package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/redlock/redlock/internal/health"
	"github.com/redlock/redlock/topology"
)

// The -json contract. Every document (and every line of watch and events) is a
// JSON object whose first member is "format_version"; a change that breaks a
// reader bumps the major version. Every duration is a number of milliseconds in a
// field named *_ms, a decimal with microsecond precision (latencies are often
// below a millisecond); absent times are omitted, never the zero time. The lock
// commands share one outcome shape: "ok", "error" when not ok, and "votes". A
// command that fails under -json still prints one document on stdout: its own
// with "ok": false, or errorDoc. docs/json/<command>.schema.json describes each
// document; the tests validate every command's output against it.

// formatVersion is the version of every -json document. 2.0: one unit rule
// (decimal _ms everywhere, bench included) and one outcome shape ("ok").
const formatVersion = "2.0"

// writeDoc writes v, which must encode as a JSON object, as one indented document
// with "format_version" as its first member.
func writeDoc(w io.Writer, v any) error {
	b, err := versioned(v)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	_, err = w.Write(out.Bytes())
	return err
}

// writeLine writes v as one compact JSON line with "format_version" first.
func writeLine(w io.Writer, v any) error {
	b, err := versioned(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func versioned(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if len(b) < 2 || b[0] != '{' {
		return nil, fmt.Errorf("json document: %T is not an object", v)
	}
	head := `{"format_version":"` + formatVersion + `"`
	if len(b) == 2 { // {}
		return []byte(head + "}"), nil
	}
	return append([]byte(head+","), b[1:]...), nil
}

// healthJSON is a master's health in -json documents (nodes, watch, plan).
type healthJSON struct {
	Master              string             `json:"master"`
	Address             string             `json:"address"`
	Reachable           bool               `json:"reachable"`
	Error               string             `json:"error,omitempty"`
	AuthFailed          bool               `json:"auth_failed,omitempty"`
	LatencyMS           float64            `json:"latency_ms"`
	Role                string             `json:"role,omitempty"`
	Mode                string             `json:"mode,omitempty"`
	Version             string             `json:"version,omitempty"`
	Server              string             `json:"server"`
	RunID               string             `json:"run_id,omitempty"`
	UptimeMS            float64            `json:"uptime_ms"`
	Replicas            int                `json:"replicas"`
	QuarantineUntil     *time.Time         `json:"quarantine_until,omitempty"`
	ClockOffsetMS       float64            `json:"clock_offset_ms"`
	ClockUncertaintyMS  float64            `json:"clock_uncertainty_ms"`
	Config              map[string]string  `json:"config,omitempty"`
	ConfigError         string             `json:"config_error,omitempty"`
	InfoError           string             `json:"info_error,omitempty"`
	EvictedKeys         int64              `json:"evicted_keys"`
	AOFLastWriteStatus  string             `json:"aof_last_write_status,omitempty"`
	RDBLastBgsaveStatus string             `json:"rdb_last_bgsave_status,omitempty"`
	CheckedAt           *time.Time         `json:"checked_at,omitempty"`
	Findings            []topology.Finding `json:"findings"`
	State               topology.NodeState `json:"state"`
	Healthy             bool               `json:"healthy"`
}

func toHealthJSON(h topology.NodeHealth, now time.Time, redact func(string) string) healthJSON {
	out := healthJSON{
		Master: h.Master, Address: h.Address, Reachable: h.Reachable, Error: redact(h.Error), AuthFailed: h.AuthFailed,
		LatencyMS: ms(h.Latency), Role: h.Role, Mode: h.Mode, Version: h.Version, Server: h.ServerName(), RunID: h.RunID,
		UptimeMS: ms(h.Uptime), Replicas: h.Replicas, QuarantineUntil: jsonTime(h.QuarantineUntil),
		ClockOffsetMS: ms(h.ClockOffset), ClockUncertaintyMS: ms(h.ClockUncertainty),
		Config: h.Config, ConfigError: redact(h.ConfigError), InfoError: redact(h.InfoError), EvictedKeys: h.EvictedKeys,
		AOFLastWriteStatus: h.AOFLastWriteStatus, RDBLastBgsaveStatus: h.RDBLastBgsaveStatus,
		CheckedAt: jsonTime(h.CheckedAt), Findings: h.Findings, State: h.State(now), Healthy: h.Healthy(now),
	}
	if out.Findings == nil {
		out.Findings = []topology.Finding{}
	}
	return out
}

// planJSON is `plan -json`.
type planJSON struct {
	Cluster string           `json:"cluster"`
	Quorum  int              `json:"quorum"`
	Masters []masterPlanJSON `json:"masters"`
	Summary health.Summary   `json:"summary"`
}

type masterPlanJSON struct {
	Health  healthJSON      `json:"health"`
	Checked bool            `json:"checked"`
	Changes []health.Change `json:"changes"`
}

func toPlanJSON(p *health.Plan, now time.Time, redact func(string) string) planJSON {
	out := planJSON{Cluster: p.Cluster, Quorum: p.Quorum, Summary: p.Summary, Masters: []masterPlanJSON{}}
	for _, mp := range p.Masters {
		out.Masters = append(out.Masters, masterPlanJSON{Health: toHealthJSON(mp.Health, now, redact), Checked: mp.Checked, Changes: mp.Changes})
	}
	return out
}
