package tui

import (
	"strings"

	"github.com/redlock/redlock/topology"
)

// View draws the screen: header, then the panels (or a modal that takes the
// body), a modal below them, the status line, and the help bar (or the filter).
func (m *Model) View() string {
	ctx := m.ctx
	if ctx.width == 0 || ctx.height == 0 {
		return ""
	}
	rows := m.nodeRows()
	lines := []string{m.header.View(ctx, rows, m.poll.polled)}
	md := m.top()
	where := placeBelow
	if md != nil {
		where, _ = md.Place()
	}
	if md != nil && where == placeBody {
		lines = appendNonEmpty(lines, md.View(ctx))
	} else {
		// Each panel fills the height the layout gave it, so that the status line and
		// the help bar stay at the bottom of the screen.
		lines = appendBlock(lines, m.nodes.View(ctx, nodesVM{rows: rows, polled: m.poll.polled, interval: ctx.opts.Interval, now: ctx.now}), m.nodes.h)
		lines = appendBlock(lines, m.table.View(ctx, m.tableVM()), m.table.h)
		lines = appendBlock(lines, m.detail.View(ctx, m.detailVM(rows)), m.detail.h)
		if md != nil && where == placeBelow {
			lines = appendNonEmpty(lines, md.View(ctx))
		}
	}
	filtering := md != nil && where == placeBar
	lines = append(lines, m.status.View(ctx, m.table.filter, filtering))
	if filtering {
		lines = append(lines, md.View(ctx))
	} else {
		lines = append(lines, shortHelp(ctx))
	}
	return strings.Join(clip(lines, ctx.width, ctx.height), "\n")
}

// tableVM is the table's narrow view of the model.
func (m *Model) tableVM() tableVM {
	return tableVM{
		now: m.ctx.now, polled: m.poll.polled, heldHere: len(m.hold.held),
		mine: m.hold.mine, set: m.poll.set, snap: &m.poll.snap, quorum: m.ctx.opts.Quorum,
	}
}

// detailVM is the detail pane's narrow view of the model.
func (m *Model) detailVM(rows []topology.NodeHealth) detailVM {
	vm := detailVM{now: m.ctx.now, polled: m.poll.polled, history: m.poll.history, source: m.poll.snap.EventSource}
	if li := m.table.selected(); li != nil {
		vm.lock, vm.holder = li, m.holder(li)
	}
	if len(rows) > 0 {
		n := rows[clamp(m.nodes.cur, 0, len(rows)-1)]
		vm.node, vm.latency = &n, m.poll.latHist[n.Master]
	}
	return vm
}

// shortHelp is the help bar.
func shortHelp(ctx *programContext) string {
	return ctx.help.ShortHelpView(ctx.keys.ShortHelp())
}

// appendBlock appends block's lines, padded with empty lines to h.
func appendBlock(lines []string, block string, h int) []string {
	lines = appendNonEmpty(lines, block)
	for range h - strings.Count(block, "\n") - min(len(block), 1) {
		lines = append(lines, "")
	}
	return lines
}

func appendNonEmpty(lines []string, block string) []string {
	if block == "" {
		return lines
	}
	return append(lines, strings.Split(block, "\n")...)
}
