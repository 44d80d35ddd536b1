package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/internal/human"
	"github.com/redlock/redlock/topology"
)

// pane is what the bottom pane shows.
type pane int

const (
	paneLock    pane = iota // the selected lock's detail
	paneNode                // the selected node's detail (enter on a node)
	paneHistory             // recent lock events (H)
)

// detailPane is the bottom pane: the selected lock on every master, a master's
// detail, or the history. On a tall terminal the lock's detail is always there;
// on a short one every pane opens on demand (enter, H) and esc closes it.
type detailPane struct {
	w, h int
	show pane
	open bool // asked for: the layout makes room for it
}

// detailVM is what the pane's view reads: the selected lock and master, and the
// poller's history.
type detailVM struct {
	now     time.Time
	polled  bool
	lock    *admin.LockInfo
	holder  string // of lock, escaped
	node    *topology.NodeHealth
	latency []float64 // the node's recent latencies
	history []historyEntry
	source  string // Snapshot.EventSource
}

// SetSize sets the pane's width and height; a height of zero hides it.
func (p *detailPane) SetSize(w, h int) { p.w, p.h = w, h }

// toggle shows v, or when v is shown, closes it (back to the lock's detail).
func (p *detailPane) toggle(v pane) {
	if p.show == v && (p.open || v != paneLock) {
		p.show, p.open = paneLock, false
		return
	}
	p.show, p.open = v, true
}

// Update handles the pane's keys: enter opens (or closes) the selected lock's
// detail, or the selected master's when the nodes panel has the focus; H the
// history. It reports whether it took the key.
func (p *detailPane) Update(msg tea.KeyMsg, k *keyMap, onNodes bool) bool {
	switch {
	case key.Matches(msg, k.Open) && onNodes:
		p.toggle(paneNode)
	case key.Matches(msg, k.Open):
		p.toggle(paneLock)
	case key.Matches(msg, k.History):
		p.toggle(paneHistory)
	default:
		return false
	}
	return true
}

// close goes back to the lock's detail, shown only where it fits.
func (p *detailPane) close() { p.show, p.open = paneLock, false }

// View renders the pane; empty when hidden or when there is nothing to show.
func (p *detailPane) View(ctx *programContext, vm detailVM) string {
	if p.h <= 0 {
		return ""
	}
	switch p.show {
	case paneNode:
		return nodeDetailView(ctx.st, vm, p.w, p.h)
	case paneHistory:
		return historyView(ctx.st, vm, p.w, p.h)
	}
	st := ctx.st
	li := vm.lock
	if li == nil {
		return ""
	}
	word, sty := lockState(st, stateAt(li, vm.now))
	lines := []string{st.Title.Render("Lock "+escape.Text(li.Name)) + "  " + sty.Render(word) + st.Muted.Render(fmt.Sprintf("  %d/%d votes, quorum %d", li.Votes, li.Total, li.Quorum))}
	info := []string{"key " + escape.Text(li.Key), "owner " + vm.holder}
	if li.Owner != nil && !li.Owner.At.IsZero() {
		info = append(info, "since "+li.Owner.At.Format("15:04:05"))
	}
	info = append(info, "library "+orUnknown(escape.Text(li.Library)))
	if li.Fence > 0 {
		info = append(info, fmt.Sprintf("fence %d", li.Fence))
	}
	lines = append(lines, "  "+strings.Join(info, st.Muted.Render(" · ")))
	if li.Value != "" {
		lines = append(lines, "  value "+escape.Text(admin.Redact(li.Value)))
	}
	valW := clamp(p.w-8-12-6, 10, 70)
	lines = append(lines, st.Muted.Render("  "+fit("MASTER", 8)+" "+fit("VALUE", valW)+" PTTL"))
	elapsed := vm.now.Sub(li.ObservedAt)
	for _, mv := range li.Masters {
		var val, ttl string
		switch {
		case mv.Err != nil:
			val = st.Bad.Render("✖ " + escape.Text(mv.Err.Error()))
		case !mv.Present:
			val = st.Muted.Render("— absent")
		default:
			val = escape.Text(admin.Redact(mv.Value))
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
				ttl = human.Duration(mv.PTTL - elapsed)
			}
		}
		lines = append(lines, "  "+fit(escape.Text(mv.Master), 8)+" "+fit(val, valW)+" "+ttl)
	}
	if recent := recentOf(vm.history, li.Name, 3); len(recent) > 0 {
		lines = append(lines, "  "+st.Muted.Render("recent: ")+strings.Join(recent, st.Muted.Render(" · ")))
	}
	return strings.Join(clip(lines, p.w, p.h), "\n")
}

// recentOf returns up to n of the lock's recent events, newest first.
func recentOf(history []historyEntry, name string, n int) []string {
	var out []string
	for i := len(history) - 1; i >= 0 && len(out) < n; i-- {
		if e := history[i]; e.name == name {
			out = append(out, e.at.Format("15:04:05")+" "+e.kind+" "+e.who)
		}
	}
	return out
}
