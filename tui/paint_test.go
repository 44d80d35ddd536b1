package tui

import (
	"fmt"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/stretchr/testify/assert"
)

// TestPainterRendersAsLipgloss: the table's cells come out as lipgloss renders
// them, in every colour profile, on dark and light terminals, for every style of
// the console and texts of every kind; other styles and texts go to lipgloss.
func TestPainterRendersAsLipgloss(t *testing.T) {
	defer lipgloss.SetColorProfile(termenv.Ascii)
	defer lipgloss.SetHasDarkBackground(lipgloss.HasDarkBackground())
	st := DefaultStyles()
	styles := map[string]lipgloss.Style{
		"Title": st.Title, "Muted": st.Muted, "Good": st.Good, "Warn": st.Warn, "Bad": st.Bad, "Info": st.Info,
		"Selected": st.Selected, "Cursor": st.Cursor, "BarFull": st.BarFull, "BarEmpty": st.BarEmpty, "Prompt": st.Prompt, "Plain": st.Plain,
	}
	texts := []string{"x", "● held      ", "  59m12s", "█████░░░", "› svc/000042 ok", "ünïcödé 漢字 🔒", " ", "", "two\nlines", "a\ttab", "nul\x00"}
	for _, profile := range []termenv.Profile{termenv.TrueColor, termenv.ANSI256, termenv.ANSI, termenv.Ascii} {
		for _, dark := range []bool{true, false} {
			lipgloss.SetColorProfile(profile)
			lipgloss.SetHasDarkBackground(dark)
			var p painter
			for name, s := range styles {
				for _, text := range texts {
					for range 2 { // worked out, then from the cache
						assert.Equal(t, s.Render(text), p.render(s, text), fmt.Sprintf("profile %d dark %v style %s text %q", profile, dark, name, text))
					}
				}
			}
		}
	}
}
