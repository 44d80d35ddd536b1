package tui

import (
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/redlock/redlock/internal/human"
)

// fit cuts s (which may hold ANSI styles) to w cells and pads it to exactly w.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) > w {
		s = ansi.Truncate(s, w, "…")
	}
	if pad := w - ansi.StringWidth(s); pad > 0 {
		s += strings.Repeat(" ", pad)
	}
	return s
}

// cut cuts s to at most w cells without padding.
func cut(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) > w {
		return ansi.Truncate(s, w, "…")
	}
	return s
}

// clip keeps the first h lines of lines, each cut to w cells.
func clip(lines []string, w, h int) []string {
	if h < 0 {
		h = 0
	}
	if len(lines) > h {
		lines = lines[:h]
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = cut(l, w)
	}
	return out
}

// humanLeft is the time left until t at now, as people read it.
func humanLeft(t, now time.Time) string { return human.Duration(t.Sub(now)) }

// latency formats a round-trip time with sub-millisecond precision.
func latency(d time.Duration) string { return human.Latency(d) }

// bar draws a w-cell bar filled to frac (0..1).
func bar(p *painter, st Styles, frac float64, w int) string {
	if w <= 0 {
		return ""
	}
	if frac < 0 {
		frac = 0
	}
	if frac > 1 {
		frac = 1
	}
	full := int(frac*float64(w) + 0.5)
	if frac > 0 && full == 0 {
		full = 1
	}
	return p.render(st.BarFull, strings.Repeat("█", full)) + p.render(st.BarEmpty, strings.Repeat("░", w-full))
}
