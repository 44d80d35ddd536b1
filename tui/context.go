package tui

import (
	"time"

	"github.com/charmbracelet/bubbles/help"
	tea "github.com/charmbracelet/bubbletea"
)

// programContext is what every component of the console shares (gh-dash's
// ProgramContext): the options, the one key map, the one styles struct, the
// clock of the frame being drawn and the terminal's size. The root model owns it;
// components read it and never keep a copy of its fields.
type programContext struct {
	opts          Options
	keys          keyMap
	st            Styles
	now           time.Time // the clock at the last tick: every panel counts down from it
	width, height int
	help          help.Model // draws the help bar and the help screen from keys
	paint         painter    // renders the table's cells in st
	// frame schedules the next frame tick; tests that drive ticks themselves
	// replace it with one that schedules nothing.
	frame func(time.Duration) tea.Cmd
}

func newProgramContext(opts Options) *programContext {
	return &programContext{
		opts:  opts,
		keys:  newKeyMap(opts.ReadOnly),
		st:    DefaultStyles(),
		help:  help.New(),
		now:   opts.Now(),
		frame: func(d time.Duration) tea.Cmd { return tea.Tick(d, func(time.Time) tea.Msg { return tickMsg{} }) },
	}
}
