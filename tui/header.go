package tui

import (
	"fmt"
	"strings"

	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/topology"
)

// headerBar is the top line: cluster, quorum k/N, healthy masters, clock, notes.
type headerBar struct{ w int }

// SetSize sets the header's width; it is always one line.
func (h *headerBar) SetSize(w, _ int) { h.w = w }

// View renders the header over the masters' rows (nodesVM).
func (h *headerBar) View(ctx *programContext, rows []topology.NodeHealth, polled bool) string {
	st, now := ctx.st, ctx.now
	total := len(rows)
	healthy := 0
	for i := range rows {
		if rows[i].Healthy(now) {
			healthy++
		}
	}
	health := fmt.Sprintf("healthy %d/%d", healthy, total)
	switch {
	case !polled:
		health = st.Muted.Render("○ healthy ?/" + fmt.Sprint(total))
	case healthy >= ctx.opts.Quorum:
		health = st.Good.Render("● " + health)
	default:
		health = st.Bad.Render("✖ " + health + " (no quorum)")
	}
	parts := []string{
		st.Title.Render("redlock") + " " + st.Title.Render(escape.Line(ctx.opts.Cluster, 40)),
		fmt.Sprintf("quorum %d/%d", ctx.opts.Quorum, total),
		health,
		now.Format("15:04:05"),
	}
	if ctx.opts.ReadOnly {
		parts = append(parts, st.Warn.Render("read-only"))
	}
	if ctx.opts.Note != "" {
		parts = append(parts, st.Info.Render(escape.Line(ctx.opts.Note, 80)))
	}
	return cut(strings.Join(parts, st.Muted.Render(" · ")), h.w)
}
