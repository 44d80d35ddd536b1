package tui

import "github.com/charmbracelet/lipgloss"

// Styles holds the console's styles by role: the one place a colour is chosen. Colours adapt to dark and light
// terminals; every coloured thing also carries a glyph or a word, so the screen
// still reads under NO_COLOR (lipgloss then drops the colours).
type Styles struct {
	Title    lipgloss.Style // header cluster name, panel titles
	Muted    lipgloss.Style // secondary text, column heads
	Good     lipgloss.Style // up, held, quorum met
	Warn     lipgloss.Style // quarantined, partial, degraded
	Bad      lipgloss.Style // down, orphaned, errors
	Info     lipgloss.Style // contested, notes
	Selected lipgloss.Style // the cursor row of the focused panel
	Cursor   lipgloss.Style // the cursor row of the unfocused panel
	BarFull  lipgloss.Style
	BarEmpty lipgloss.Style
	Prompt   lipgloss.Style // prompts and confirmations
	Plain    lipgloss.Style // text without a role
}

// DefaultStyles returns the console's styles.
func DefaultStyles() Styles {
	var (
		fg     = lipgloss.AdaptiveColor{Light: "#1F2328", Dark: "#E6EDF3"}
		muted  = lipgloss.AdaptiveColor{Light: "#6E7781", Dark: "#8B949E"}
		good   = lipgloss.AdaptiveColor{Light: "#1A7F37", Dark: "#3FB950"}
		warn   = lipgloss.AdaptiveColor{Light: "#9A6700", Dark: "#D29922"}
		bad    = lipgloss.AdaptiveColor{Light: "#CF222E", Dark: "#F85149"}
		info   = lipgloss.AdaptiveColor{Light: "#0969DA", Dark: "#58A6FF"}
		selBg  = lipgloss.AdaptiveColor{Light: "#DDF4FF", Dark: "#1F3A5F"}
		curBg  = lipgloss.AdaptiveColor{Light: "#EAEEF2", Dark: "#262C36"}
		accent = lipgloss.AdaptiveColor{Light: "#8250DF", Dark: "#BC8CFF"}
	)
	return Styles{
		Title:    lipgloss.NewStyle().Bold(true).Foreground(accent),
		Muted:    lipgloss.NewStyle().Foreground(muted),
		Good:     lipgloss.NewStyle().Foreground(good),
		Warn:     lipgloss.NewStyle().Foreground(warn),
		Bad:      lipgloss.NewStyle().Foreground(bad).Bold(true),
		Info:     lipgloss.NewStyle().Foreground(info),
		Selected: lipgloss.NewStyle().Background(selBg).Foreground(fg).Bold(true),
		Cursor:   lipgloss.NewStyle().Background(curBg).Foreground(fg),
		BarFull:  lipgloss.NewStyle().Foreground(good),
		BarEmpty: lipgloss.NewStyle().Foreground(muted),
		Prompt:   lipgloss.NewStyle().Foreground(accent).Bold(true),
		Plain:    lipgloss.NewStyle(),
	}
}
