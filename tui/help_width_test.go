package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/assert"
)

// The `?` screen fits 80 columns: its key table was 93 columns wide and cut at
// the screen's edge ("copy own token", "quit", "force-expire" and the legend's
// ends were lost). Every key and every legend word is on screen at 80 and 120.
func TestBugHelpFits80Columns(t *testing.T) {
	for _, w := range []int{80, 120} {
		m, _, _, _ := fixture(t, w, 40, false)
		started(t, m)
		drive(t, m, keys("?"))
		view := ansi.Strip(m.View())
		for _, l := range strings.Split(view, "\n") {
			assert.LessOrEqual(t, ansi.StringWidth(l), w, "line %q", l)
		}
		flat := strings.Join(strings.Fields(view), " ")
		for _, want := range []string{"sort by kind", "copy own token", "force-expire", "esc cancel", "q quit",
			"○ orphaned (validity gone)", "✖ down", "also matched anywhere", "press any key to return"} {
			assert.Contains(t, flat, want, "at %d columns", w)
		}
	}
}
