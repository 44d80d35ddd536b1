package tui

import (
	"fmt"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/internal/human"
	"github.com/redlock/redlock/topology"
)

// nodesPanel lists the masters, one row each, or on one summary line when the
// terminal is short (the rows open on tab). Its cursor picks the master whose
// detail enter opens.
type nodesPanel struct {
	w, h    int
	focused bool
	cur     int
}

// nodesVM is what the panel's view reads: the masters' rows and the time.
type nodesVM struct {
	rows     []topology.NodeHealth
	polled   bool
	interval time.Duration
	now      time.Time
}

// SetSize sets the panel's width and height (title included); a height of 1 is
// the summary line.
func (p *nodesPanel) SetSize(w, h int) { p.w, p.h = w, h }

// Update moves the cursor when the panel has the focus; n is the number of rows.
func (p *nodesPanel) Update(msg tea.KeyMsg, k *keyMap, n int) bool {
	if !p.focused {
		return false
	}
	d, ok := movement(msg, k, max(p.h-2, 1))
	if ok {
		p.cur = clamp(p.cur+d, 0, n-1)
	}
	return ok
}

// nodeState returns the glyph, word and style of a master's state.
func nodeState(st Styles, n *topology.NodeHealth, now time.Time, polled bool) (string, lipgloss.Style) {
	if !polled || (n.CheckedAt.IsZero() && !n.Reachable && n.Error == "") {
		return "○ unknown", st.Muted
	}
	switch n.State(now) {
	case topology.StateDown:
		return "✖ down", st.Bad
	case topology.StateSlow:
		return "▲ slow", st.Warn
	case topology.StateQuarantined:
		return "◐ quarantined", st.Warn
	case topology.StateDegraded:
		return "▲ degraded", st.Warn
	}
	return "● up", st.Good
}

// View renders the panel; empty when it has no room.
func (p *nodesPanel) View(ctx *programContext, vm nodesVM) string {
	if p.h <= 0 {
		return ""
	}
	st := ctx.st
	title := "Nodes"
	if p.focused {
		title = "▸ Nodes"
	}
	if p.h == 1 && len(vm.rows) > 0 {
		return p.summary(st, title, vm)
	}
	lines := []string{st.Title.Render(title) + st.Muted.Render(fmt.Sprintf("  every %s", human.Duration(vm.interval)))}
	wide := p.w >= 110
	nameW := 4
	for i := range vm.rows {
		nameW = max(nameW, min(len(vm.rows[i].Master), 16))
	}
	for i := range vm.rows {
		n := &vm.rows[i]
		word, sty := nodeState(st, n, vm.now, vm.polled)
		isSel := i == p.cur
		sel := isSel && p.focused
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
			up, usty := uptime(st, n, vm.now)
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
		lines = append(lines, cursorRow(st, row, p.w, isSel, p.focused))
	}
	return strings.Join(clip(lines, p.w, p.h), "\n")
}

// summary is the panel on one line: how many masters are up, then each master
// by glyph and name; tab opens the rows.
func (p *nodesPanel) summary(st Styles, title string, vm nodesVM) string {
	up := 0
	var marks []string
	for i := range vm.rows {
		n := &vm.rows[i]
		word, sty := nodeState(st, n, vm.now, vm.polled)
		if vm.polled && n.Healthy(vm.now) {
			up++
		}
		glyph, _, _ := strings.Cut(word, " ")
		marks = append(marks, sty.Render(glyph)+" "+escape.Line(n.Master, 16))
	}
	count := fmt.Sprintf("  %d/%d up  ", up, len(vm.rows))
	if !vm.polled {
		count = fmt.Sprintf("  ?/%d up  ", len(vm.rows))
	}
	return cut(st.Title.Render(title)+st.Muted.Render(count)+strings.Join(marks, "  ")+st.Muted.Render("  (tab: rows)"), p.w)
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
		return "quarantine " + human.Duration(n.QuarantineUntil.Sub(now)), st.Warn
	}
	if !uptimeKnown(n) {
		return "uptime ?", st.Muted
	}
	return "up " + human.Duration(n.Uptime), st.Plain
}

// uptimeKnown reports whether the master told its uptime: a server without
// INFO's uptime (the embedded masters of up -embedded and demo) reads as 0 with
// no run_id, which is not "up 0ms".
func uptimeKnown(n *topology.NodeHealth) bool { return n.Uptime > 0 || n.RunID != "" }

// uptimeText is the master's uptime, or "?" when it did not tell it.
func uptimeText(n *topology.NodeHealth) string {
	if !uptimeKnown(n) {
		return "?"
	}
	return human.Duration(n.Uptime)
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
	var (
		s   string
		sty lipgloss.Style
	)
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
		if f.Severity >= topology.SeverityWarning && f.Acknowledged == "" && (best < 0 || f.Severity > n.Findings[best].Severity) {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	return n.Findings[best].Code
}
