package tui

import (
	"fmt"

	"github.com/redlock/redlock/internal/escape"
)

type statusKind int

const (
	statusInfo statusKind = iota
	statusOK
	statusWarn
	statusErr
)

// statusMax bounds one string argument of a status line, in cells.
const statusMax = 80

// statusLine is the line under the panels: the result of the last action, or the
// last poll's error. Its text is built only by set and poll, which escape every
// string and error they are given (lock names, holders, error texts come from
// other users and from masters): nothing raw reaches it.
type statusLine struct {
	kind     statusKind
	text     string
	fromPoll bool
}

// set replaces the line with format filled with args. Every string, error and
// fmt.Stringer argument is escaped and cut to statusMax cells; the format itself
// is the console's own text.
func (s *statusLine) set(k statusKind, format string, args ...any) {
	*s = statusLine{kind: k, text: fmt.Sprintf(format, safeArgs(args)...)}
}

// poll shows a poll's error (escaped) unless an action's result is on the line;
// clearPoll removes it.
func (s *statusLine) poll(err error) {
	if s.text == "" || s.fromPoll {
		*s = statusLine{kind: statusErr, text: "poll: " + escape.Text(err.Error()), fromPoll: true}
	}
}

// clearPoll removes a poll error once polls succeed again.
func (s *statusLine) clearPoll() {
	if s.fromPoll {
		*s = statusLine{}
	}
}

// shown is text the console already escaped for the screen (a holder from
// holderOf): a status line takes it as it is.
type shown string

// safeArgs escapes the arguments of a status line.
func safeArgs(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case shown:
			out[i] = string(v)
		case string:
			out[i] = escape.Line(v, statusMax)
		case error:
			out[i] = escape.Line(v.Error(), 4*statusMax)
		case fmt.Stringer:
			out[i] = escape.Line(v.String(), statusMax)
		default:
			out[i] = a
		}
	}
	return out
}

// View renders the line; an empty line shows the filter in force, if any.
func (s *statusLine) View(ctx *programContext, filter string, filtering bool) string {
	st := ctx.st
	switch {
	case s.text == "" && filter != "" && !filtering:
		return st.Muted.Render("filter: " + escape.Line(filter, statusMax) + " (/ to change, esc to clear)")
	case s.text == "":
		return ""
	}
	switch s.kind {
	case statusOK:
		return st.Good.Render("✔ " + s.text)
	case statusWarn:
		return st.Warn.Render("! " + s.text)
	case statusErr:
		return st.Bad.Render("✖ " + s.text)
	}
	return st.Muted.Render("· " + s.text)
}
