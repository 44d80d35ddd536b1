package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/topology"
)

// nodesPanel lists the masters, one row each.
type nodesPanel struct{ w, h int }

// SetSize sets the panel's width and height (title included).
func (p *nodesPanel) SetSize(w, h int) { p.w, p.h = w, h }

// nodeState returns the glyph, word and style of a master's state.
func nodeState(st Styles, n *topology.NodeHealth, now time.Time, polled bool) (string, lipgloss.Style) {
	if !polled || (n.CheckedAt.IsZero() && !n.Reachable && n.Error == "") {
		return "○ unknown", st.Muted
	}
	switch n.State(now) {
	case topology.StateDown:
		return "✖ down", st.Bad
	case topology.StateQuarantined:
		return "◐ quarantined", st.Warn
	case topology.StateDegraded:
		return "▲ degraded", st.Warn
	}
	return "● up", st.Good
}

// View renders the panel; empty when it has no room.
func (p *nodesPanel) View(m *Model) string {
	if p.h <= 0 {
		return ""
	}
	st := m.st
	title := "Nodes"
	if m.focus == focusNodes {
		title = "▸ Nodes"
	}
	lines := []string{st.Title.Render(title) + st.Muted.Render(fmt.Sprintf("  every %s", short(m.opts.Interval)))}
	rows := m.nodeRows()
	wide := p.w >= 110
	nameW := 4
	for i := range rows {
		nameW = max(nameW, min(len(rows[i].Master), 16))
	}
	for i := range rows {
		n := &rows[i]
		word, sty := nodeState(st, n, m.now, m.polled)
		isSel := i == m.nodeCur
		sel := isSel && m.focus == focusNodes
		cells := []string{cell(sty, fit(word, 13), sel), fit(escape.Text(n.Master), nameW)}
		if wide {
			cells = append(cells, fit(escape.Text(n.Address), 22))
		}
		if n.Reachable {
			cells = append(cells,
				fit(latency(n.Latency), 7),
				fit(orUnknown(escape.Text(n.Role)), 7),
			)
			if wide {
				cells = append(cells, fit(orUnknown(escape.Text(n.Version)), 8))
			}
			up, usty := uptime(st, n, m.now)
			cells = append(cells, cell(usty, fit(up, 16), sel), fit(offset(n), 12))
			risk, rsty := persistence(st, n)
			cells = append(cells, cell(rsty, risk, sel))
			if wide {
				if f := worstFinding(n); f != "" {
					cells = append(cells, cell(st.Warn, " "+escape.Text(f), sel))
				}
			}
		} else if n.Error != "" {
			cells = append(cells, cell(st.Bad, escape.Text(n.Error), sel))
		}
		row := strings.Join(cells, " ")
		lines = append(lines, cursorRow(st, row, p.w, isSel, m.focus == focusNodes))
	}
	return strings.Join(clip(lines, p.w, p.h), "\n")
}

// cell styles text unless the row is selected (the selection style then covers it).
func cell(s lipgloss.Style, text string, selected bool) string {
	if selected {
		return text
	}
	return s.Render(text)
}

// cursorRow prefixes a row with the cursor glyph; the focused panel's cursor row
// also gets the selection style.
func cursorRow(st Styles, row string, w int, selected, focused bool) string {
	switch {
	case selected && focused:
		return st.Selected.Render(fit("› "+row, w))
	case selected:
		return "› " + row
	}
	return "  " + row
}

func orUnknown(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

func uptime(st Styles, n *topology.NodeHealth, now time.Time) (string, lipgloss.Style) {
	if now.Before(n.QuarantineUntil) {
		return "quarantine " + short(n.QuarantineUntil.Sub(now)), st.Warn
	}
	if n.Uptime <= 0 && n.RunID == "" {
		return "uptime ?", st.Muted
	}
	return "up " + short(n.Uptime), lipgloss.NewStyle()
}

func offset(n *topology.NodeHealth) string {
	if n.ClockOffset == 0 && n.ClockUncertainty == 0 {
		return "clock ?"
	}
	sign := "+"
	if n.ClockOffset < 0 {
		sign = "-"
	}
	d := n.ClockOffset
	if d < 0 {
		d = -d
	}
	return "clock " + sign + latency(d)
}

// persistence summarises the durability of a master's locks from its config.
func persistence(st Styles, n *topology.NodeHealth) (string, lipgloss.Style) {
	if len(n.Config) == 0 {
		return "persist ?", st.Muted
	}
	var s string
	sty := lipgloss.NewStyle()
	switch aof, fsync := n.Config["appendonly"], n.Config["appendfsync"]; {
	case aof == "yes" && fsync == "always":
		s = "aof always"
		sty = st.Good
	case aof == "yes":
		s = "aof " + orUnknown(fsync)
		sty = st.Warn
	case aof == "no":
		s = "no aof"
		sty = st.Warn
	default:
		s = "persist ?"
		sty = st.Muted
	}
	if p := n.Config["maxmemory-policy"]; p != "" && p != "noeviction" {
		s += " evicts:" + p
		sty = st.Bad
	}
	return s, sty
}

func worstFinding(n *topology.NodeHealth) string {
	best := -1
	for i, f := range n.Findings {
		if f.Severity >= topology.SeverityWarning && (best < 0 || f.Severity > n.Findings[best].Severity) {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	return n.Findings[best].Code
}
