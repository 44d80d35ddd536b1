package tui

import (
	"strings"

	"github.com/redlock/redlock/internal/escape"
)

// View draws the screen: header, nodes, locks, detail, prompt, status and help.
func (m *Model) View() string {
	if m.width == 0 || m.height == 0 {
		return ""
	}
	lines := []string{m.header.View(m)}
	if m.mode == modeHelp {
		body := strings.Split(m.fullHelp(), "\n")
		for len(body) < m.height-3 {
			body = append(body, "")
		}
		lines = append(lines, clip(body, m.width, max(m.height-3, 0))...)
	} else {
		lines = appendNonEmpty(lines, m.nodes.View(m))
		lines = appendNonEmpty(lines, m.table.View(m))
		lines = appendNonEmpty(lines, m.detail.View(m))
		if m.mode == modeAcquire || m.mode == modeConfirm {
			lines = appendNonEmpty(lines, m.prompt.View(m))
		}
	}
	lines = append(lines, m.statusView())
	if m.mode == modeFilter {
		lines = append(lines, m.filter.View()+m.st.Muted.Render("  enter keep · esc clear"))
	} else {
		lines = append(lines, m.help.ShortHelpView(m.keys.ShortHelp()))
	}
	return strings.Join(clip(lines, m.width, m.height), "\n")
}

func appendNonEmpty(lines []string, block string) []string {
	if block == "" {
		return lines
	}
	return append(lines, strings.Split(block, "\n")...)
}

func (m *Model) fullHelp() string {
	var b strings.Builder
	b.WriteString(m.st.Title.Render("Keys") + "\n\n")
	b.WriteString(m.help.FullHelpView(m.keys.FullHelp()) + "\n\n")
	b.WriteString(m.st.Muted.Render("Locks: ● held on a majority · ◐ partial (fewer than a quorum) · ◆ contested · ○ orphaned") + "\n")
	b.WriteString(m.st.Muted.Render("Nodes: ● up · ◐ quarantined (restarted, may not vote yet) · ▲ degraded · ✖ down") + "\n")
	if m.opts.ReadOnly {
		b.WriteString(m.st.Warn.Render("read-only: acquire, extend, release and force-expire are disabled") + "\n")
	}
	b.WriteString("\n" + m.st.Muted.Render("press any key to return"))
	return b.String()
}

func (m *Model) statusView() string {
	s := m.status
	switch {
	case s.text == "" && m.filter.Value() != "" && m.mode != modeFilter:
		return m.st.Muted.Render("filter: " + m.filter.Value() + " (/ to change, esc in filter to clear)")
	case s.text == "":
		return ""
	}
	switch s.kind {
	case statusOK:
		return m.st.Good.Render("✔ " + s.text)
	case statusWarn:
		return m.st.Warn.Render("! " + s.text)
	case statusErr:
		return m.st.Bad.Render("✖ " + s.text)
	}
	return m.st.Muted.Render("· " + s.text)
}

// safeName is a lock name as the screen may show it: escaped and cut.
func (m *Model) safeName(name string) string { return escape.Line(name, 60) }
