package tui

import (
	"fmt"
	"strings"
)

// headerBar is the top line: cluster, quorum k/N, healthy masters, clock, notes.
type headerBar struct{ w int }

// SetSize sets the header's width; it is always one line.
func (h *headerBar) SetSize(w, _ int) { h.w = w }

// View renders the header.
func (h *headerBar) View(m *Model) string {
	st := m.st
	rows := m.nodeRows()
	total := len(rows)
	healthy := 0
	for i := range rows {
		if rows[i].Healthy(m.now) {
			healthy++
		}
	}
	health := fmt.Sprintf("healthy %d/%d", healthy, total)
	switch {
	case !m.polled:
		health = st.Muted.Render("○ healthy ?/" + fmt.Sprint(total))
	case healthy >= m.opts.Quorum:
		health = st.Good.Render("● " + health)
	default:
		health = st.Bad.Render("✖ " + health + " (no quorum)")
	}
	parts := []string{
		st.Title.Render("redlock") + " " + st.Title.Render(m.opts.Cluster),
		fmt.Sprintf("quorum %d/%d", m.opts.Quorum, total),
		health,
		m.now.Format("15:04:05"),
	}
	if m.opts.ReadOnly {
		parts = append(parts, st.Warn.Render("read-only"))
	}
	if m.opts.Note != "" {
		parts = append(parts, st.Info.Render(m.opts.Note))
	}
	return cut(strings.Join(parts, st.Muted.Render(" · ")), h.w)
}
