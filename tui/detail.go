package tui

import (
	"fmt"
	"strings"

	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/quorum"
)

// detailPane shows the selected lock on every master: value (redacted) and PTTL.
type detailPane struct{ w, h int }

// SetSize sets the pane's width and height; a height of zero hides it.
func (p *detailPane) SetSize(w, h int) { p.w, p.h = w, h }

// View renders the pane; empty when hidden or when no lock is selected.
func (p *detailPane) View(m *Model) string {
	if p.h <= 0 {
		return ""
	}
	switch m.view {
	case viewNode:
		return m.nodeDetailView(p.w, p.h)
	case viewHistory:
		return m.historyView(p.w, p.h)
	}
	st := m.st
	li := m.selected()
	if li == nil {
		return ""
	}
	word, sty := lockState(st, li.State)
	lines := []string{st.Title.Render("Lock "+escape.Text(li.Name)) + "  " + sty.Render(word) + st.Muted.Render(fmt.Sprintf("  %d/%d votes, quorum %d", li.Votes, li.Total, li.Quorum))}
	info := []string{"key " + escape.Text(li.Key), "owner " + m.holder(li)}
	if li.Owner != nil && !li.Owner.At.IsZero() {
		info = append(info, "since "+li.Owner.At.Format("15:04:05"))
	}
	info = append(info, "library "+orUnknown(escape.Text(li.Library)))
	if li.Fence > 0 {
		info = append(info, fmt.Sprintf("fence %d", li.Fence))
	}
	lines = append(lines, "  "+strings.Join(info, st.Muted.Render(" · ")))
	if li.Value != "" {
		lines = append(lines, "  value "+escape.Text(quorum.Redact(li.Value)))
	}
	valW := clamp(p.w-8-12-6, 10, 70)
	lines = append(lines, st.Muted.Render("  "+fit("MASTER", 8)+" "+fit("VALUE", valW)+" PTTL"))
	elapsed := m.now.Sub(li.ObservedAt)
	for _, mv := range li.Masters {
		var val, ttl string
		switch {
		case mv.Err != nil:
			val = st.Bad.Render("✖ " + escape.Text(mv.Err.Error()))
		case !mv.Present:
			val = st.Muted.Render("— absent")
		default:
			val = escape.Text(quorum.Redact(mv.Value))
			if mv.Type != "" && mv.Type != "string" {
				val = escape.Text(mv.Type) + " key"
			}
			if mv.Value != li.Value && li.Value != "" && (mv.Type == "" || mv.Type == "string") {
				val += st.Warn.Render(" (differs)")
			}
			switch {
			case mv.PTTL < 0:
				ttl = st.Bad.Render("no ttl")
			case mv.PTTL-elapsed <= 0:
				ttl = st.Bad.Render("expired")
			default:
				ttl = fmt.Sprintf("%dms", (mv.PTTL - elapsed).Milliseconds())
			}
		}
		lines = append(lines, "  "+fit(escape.Text(mv.Master), 8)+" "+fit(val, valW)+" "+ttl)
	}
	if recent := m.recentOf(li.Name, 3); len(recent) > 0 {
		lines = append(lines, "  "+st.Muted.Render("recent: ")+strings.Join(recent, st.Muted.Render(" · ")))
	}
	return strings.Join(clip(lines, p.w, p.h), "\n")
}

// recentOf returns up to n of the lock's recent events, newest first.
func (m *Model) recentOf(name string, n int) []string {
	var out []string
	for i := len(m.history) - 1; i >= 0 && len(out) < n; i-- {
		if e := m.history[i]; e.name == name {
			out = append(out, e.at.Format("15:04:05")+" "+e.kind+" "+e.who)
		}
	}
	return out
}
