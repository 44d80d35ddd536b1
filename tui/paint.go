package tui

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
)

// painter renders the cells of the locks table as lipgloss.Style.Render does,
// with the escape sequences of each style worked out once: Render parses its
// style and measures its text for every cell, which made it half of a frame's
// work at 40 rows. It serves the styles of Styles, which set colours and weight
// only (a style with a width, padding, border or other attributes would be
// rendered as the first one of its colours); a text of more than one line or
// with tabs goes to Render itself.
type painter struct {
	paints map[paintKey]paint
}

// paintKey is what a plain style of colours and weight renders by.
type paintKey struct {
	fg, bg lipgloss.TerminalColor
	bold   bool
}

// paint is what Render writes before and after a one-line text.
type paint struct {
	pre, post string
	ok        bool
}

// paintMark stands for the text when a style's sequences are worked out.
const paintMark = "\x00"

// render returns s.Render(text).
func (p *painter) render(s lipgloss.Style, text string) string {
	if text == "" || strings.ContainsAny(text, "\t\r\n"+paintMark) {
		return s.Render(text)
	}
	k := paintKey{fg: s.GetForeground(), bg: s.GetBackground(), bold: s.GetBold()}
	pt, ok := p.paints[k]
	if !ok {
		pre, post, found := strings.Cut(s.Render(paintMark), paintMark)
		pt = paint{pre: pre, post: post, ok: found}
		if p.paints == nil {
			p.paints = map[paintKey]paint{}
		}
		p.paints[k] = pt
	}
	if !pt.ok {
		return s.Render(text)
	}
	return pt.pre + text + pt.post
}

// cell renders a cell of a row in s, plain on the selected row (whose style
// covers the row).
func (p *painter) cell(s lipgloss.Style, text string, selected bool) string {
	if selected {
		return text
	}
	return p.render(s, text)
}
