package health

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redlock/redlock/topology"
)

// Change is one declared setting whose live value differs on one master.
type Change struct {
	// Setting is the Redis CONFIG name ("maxmemory-policy").
	Setting string `json:"setting"`
	// From is the live value; empty with Unknown when the server does not know the setting.
	From string `json:"from"`
	To   string `json:"to"`
	// Unknown is true when CONFIG GET returned nothing for the setting (a misspelt or
	// newer setting): apply will try it and report the server's answer.
	Unknown bool `json:"unknown,omitempty"`
}

// String renders the change as plan prints it: ~ name: "from" -> "to".
func (c Change) String() string {
	from := strconv.Quote(c.From)
	if c.Unknown {
		from = "(not reported by the server)"
	}
	return fmt.Sprintf("~ %s: %s -> %s", c.Setting, from, strconv.Quote(c.To))
}

// Diff returns the declared settings of c whose live value in h differs, in
// declaration order. Values are compared as Redis means them (topology.SameSetting):
// case and surrounding space aside, memory sizes by their byte count ("1mb" equals
// "1048576"), notify-keyspace-events as a set of flags ("Kg$x" equals "g$xK"). A
// setting Redis reads only at startup (topology.StartupSetting) is never a change:
// CONFIG SET refuses it, and Assess reports the difference as a finding. It returns nil when h
// holds no settings (master down, credentials refused, CONFIG GET refused): check
// Checked first.
func Diff(c *topology.Cluster, h *topology.NodeHealth) []Change {
	if !Checked(h) {
		return nil
	}
	var out []Change
	for _, s := range c.Settings {
		name := ConfigName(s.Name)
		if topology.StartupSetting(name) {
			continue
		}
		have, ok := h.Config[name]
		if !ok {
			out = append(out, Change{Setting: name, To: s.Value, Unknown: true})
			continue
		}
		if !topology.SameSetting(name, have, s.Value) {
			out = append(out, Change{Setting: name, From: have, To: s.Value})
		}
	}
	return out
}

// Checked reports whether the live settings of the master were read.
func Checked(h *topology.NodeHealth) bool {
	return h.Reachable && !h.AuthFailed && h.ConfigError == "" && h.Config != nil
}

// MasterPlan is the plan for one master: its health (findings included) and the
// settings apply would change.
type MasterPlan struct {
	Health topology.NodeHealth `json:"health"`
	State  topology.NodeState  `json:"state"`
	// Checked is false when the live settings could not be read; Changes is then empty
	// and says nothing about drift.
	Checked bool     `json:"checked"`
	Changes []Change `json:"changes"`
}

// Plan is the live state of every master against the file, and what apply would do.
type Plan struct {
	Cluster string       `json:"cluster"`
	Quorum  int          `json:"quorum"`
	Masters []MasterPlan `json:"masters"`
	Summary Summary      `json:"summary"`
}

// Summary counts a plan: settings to change, masters they are on, error and warning
// findings, and masters whose settings could not be read.
type Summary struct {
	Changes  int `json:"changes"`
	Masters  int `json:"masters"`
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
	// FixableErrors are the errors that a pending change fixes (apply will).
	FixableErrors int `json:"fixable_errors"`
	// Acknowledged are the warnings an ignore block accepts (not in Warnings).
	Acknowledged int `json:"acknowledged"`
	Unchecked    int `json:"unchecked"`
}

// Unfixable returns the errors that apply cannot fix: unreachable masters,
// refused credentials, replicas, failing persistence, and settings not declared.
func (s Summary) Unfixable() int { return s.Errors - s.FixableErrors }

// fixedBy names, per finding code, the settings whose declared value removes it.
var fixedBy = map[string][]string{
	topology.CodeEvictionPolicy:  {"maxmemory-policy"},
	topology.CodeWeakPersistence: {"appendonly", "appendfsync"},
	topology.CodeFencingFsync:    {"appendonly", "appendfsync"},
}

// fixable reports whether one of changes sets a setting that fixes finding code.
func fixable(code string, changes []Change) bool {
	for _, s := range fixedBy[code] {
		for _, ch := range changes {
			if ch.Setting == s {
				return true
			}
		}
	}
	return false
}

// String is the summary line: "Plan: 3 settings to change on 2 masters; 1 error, 2 warnings."
func (s Summary) String() string {
	line := fmt.Sprintf("Plan: %s to change on %s; %s, %s.",
		plural(s.Changes, "setting"), plural(s.Masters, "master"), plural(s.Errors, "error"), plural(s.Warnings, "warning"))
	if s.Acknowledged > 0 {
		line += fmt.Sprintf(" %s acknowledged.", plural(s.Acknowledged, "finding"))
	}
	if s.Unchecked > 0 {
		line += fmt.Sprintf(" %s not checked.", plural(s.Unchecked, "master"))
	}
	return line
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// NewPlan builds the plan from probed health (as Prober.Probe returns it, findings
// filled) in the given order.
func NewPlan(c *topology.Cluster, hs []topology.NodeHealth, now time.Time) *Plan {
	p := &Plan{Cluster: c.Name, Quorum: c.Quorum()}
	for _, h := range hs {
		mp := MasterPlan{Health: h, State: h.State(now), Checked: Checked(&h), Changes: Diff(c, &h)}
		if mp.Changes == nil {
			mp.Changes = []Change{}
		}
		if len(mp.Changes) > 0 {
			p.Summary.Masters++
			p.Summary.Changes += len(mp.Changes)
		}
		if !mp.Checked && len(c.Settings) > 0 {
			p.Summary.Unchecked++
		}
		mp.Health.Findings = append([]topology.Finding(nil), h.Findings...)
		for i := range mp.Health.Findings {
			f := &mp.Health.Findings[i]
			f.Fixable = fixable(f.Code, mp.Changes)
			switch f.Severity {
			case topology.SeverityError:
				p.Summary.Errors++
				if f.Fixable {
					p.Summary.FixableErrors++
				}
			case topology.SeverityWarning:
				if f.Acknowledged != "" {
					p.Summary.Acknowledged++
				} else {
					p.Summary.Warnings++
				}
			}
		}
		p.Masters = append(p.Masters, mp)
	}
	return p
}

// Failure is a change that CONFIG SET refused or that timed out.
type Failure struct {
	Change
	Error string `json:"error"`
}

// Outcome is what apply did on one master.
type Outcome struct {
	Master string `json:"master"`
	// Applied are the changes CONFIG SET accepted.
	Applied []Change `json:"applied"`
	// Failed are the changes that were refused or timed out (a timed-out CONFIG SET may
	// still have been applied: run plan again).
	Failed []Failure `json:"failed"`
	// Skipped says why nothing was tried on this master (down, credentials refused,
	// settings unreadable); empty when it was tried.
	Skipped string `json:"skipped,omitempty"`
	// Persisted is true when CONFIG REWRITE saved the applied settings to the server's
	// config file; PersistError says why not (a server started without a config file
	// keeps them only until it restarts).
	Persisted    bool   `json:"persisted"`
	PersistError string `json:"persist_error,omitempty"`
}

// OK reports whether the master needs nothing more from apply: nothing skipped, nothing failed.
func (o *Outcome) OK() bool { return o.Skipped == "" && len(o.Failed) == 0 }

// Apply runs CONFIG SET for every change of the plan, masters concurrently, settings
// of one master in declaration order, each bounded by the node timeout. It never
// stops at the first failure: every master and every change gets an Outcome entry,
// in the plan's order. After the changes of a master succeed it tries CONFIG REWRITE
// so they survive a restart. Errors never contain a password.
func (p *Prober) Apply(ctx context.Context, plan *Plan) []Outcome {
	out := make([]Outcome, len(plan.Masters))
	var wg sync.WaitGroup
	for i := range plan.Masters {
		mp := &plan.Masters[i]
		out[i] = Outcome{Master: mp.Health.Master, Applied: []Change{}, Failed: []Failure{}}
		idx := p.index(mp.Health.Master)
		switch {
		case idx < 0:
			out[i].Skipped = "not in the topology"
			continue
		case !mp.Checked:
			out[i].Skipped = "settings not checked: " + uncheckedReason(&mp.Health)
			continue
		case len(mp.Changes) == 0:
			continue
		}
		wg.Add(1)
		go func(o *Outcome, idx int, changes []Change) {
			defer wg.Done()
			p.applyOne(ctx, o, idx, changes)
		}(&out[i], idx, mp.Changes)
	}
	wg.Wait()
	return out
}

func (p *Prober) applyOne(ctx context.Context, o *Outcome, idx int, changes []Change) {
	m := &p.c.Masters[idx]
	cl := p.clients[idx]
	for _, ch := range changes {
		if why := topology.UnsafeSetting(ch.Setting, ch.To); why != "" {
			// validate refuses such a file; a cluster built otherwise gets the same answer.
			o.Failed = append(o.Failed, Failure{Change: ch, Error: "not applied: " + why})
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, p.timeout)
		err := cl.ConfigSet(cctx, ch.Setting, ch.To).Err()
		cancel()
		if err != nil {
			msg := p.clean(m, err)
			if isTimeout(err) {
				msg += " (it may still have been applied: run plan again)"
			}
			o.Failed = append(o.Failed, Failure{Change: ch, Error: msg})
			continue
		}
		o.Applied = append(o.Applied, ch)
	}
	if len(o.Applied) == 0 {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	if err := cl.ConfigRewrite(cctx).Err(); err != nil {
		o.PersistError = p.clean(m, err)
		return
	}
	o.Persisted = true
}

func (p *Prober) index(master string) int {
	for i := range p.c.Masters {
		if p.c.Masters[i].Name == master {
			return i
		}
	}
	return -1
}

func uncheckedReason(h *topology.NodeHealth) string {
	switch {
	case !h.Reachable:
		return "unreachable: " + orUnknown(h.Error)
	case h.AuthFailed:
		return "authentication failed: " + orUnknown(h.Error)
	case h.ConfigError != "":
		return "CONFIG GET refused: " + h.ConfigError
	default:
		return "no settings read"
	}
}

// FailureSummary is the error summary of an apply that did not finish: a line
// saying what failed, then one line per failed change and per skipped master,
// naming the master, the setting and the server's answer. It is "" when every
// outcome is OK.
func FailureSummary(outcomes []Outcome) string {
	var lines []string
	changed := 0
	for _, o := range outcomes {
		changed += len(o.Applied)
		for _, f := range o.Failed {
			lines = append(lines, fmt.Sprintf("  master %q: %s = %q: %s", o.Master, f.Setting, f.To, f.Error))
		}
		if o.Skipped != "" {
			lines = append(lines, fmt.Sprintf("  master %q: skipped: %s", o.Master, o.Skipped))
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return fmt.Sprintf("Error: apply failed (%s changed; these failed):\n%s\n", plural(changed, "setting"), strings.Join(lines, "\n"))
}
