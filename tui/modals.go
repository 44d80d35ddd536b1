package tui

import (
	"time"

	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/internal/escape"
)

// place is where a modal is drawn.
type place int

const (
	placeBar   place = iota // instead of the help bar (the filter)
	placeBelow              // between the panels and the status line (prompts)
	placeBody               // instead of the panels (the help screen)
)

// modal is a layer over the panels that takes every key while it is on top of the
// console's stack: the filter, the acquire prompt, the force-expire confirmation
// and the help screen.
type modal interface {
	// Update handles a message. done closes the modal; out, when not nil, is its
	// outcome (a *Msg of this file), which the root model handles at once.
	Update(ctx *programContext, msg tea.Msg) (done bool, out tea.Msg, cmd tea.Cmd)
	View(ctx *programContext) string
	SetSize(w, h int)
	// Place is where the modal is drawn, and lines how many lines it takes there.
	Place() (where place, lines int)
}

// Outcomes of the modals.
type (
	// filterMsg: the filter's text changed (live, at every key) or was cleared.
	filterMsg struct {
		value   string
		cleared bool
	}
	// acquireMsg: the prompt was submitted with a valid name and TTL.
	acquireMsg struct {
		name string
		ttl  time.Duration
	}
	// cancelledMsg: a prompt or confirmation of action was cancelled; name is the
	// lock concerned, if any.
	cancelledMsg struct{ action, name string }
	// forceExpireMsg: the force-expire was confirmed.
	forceExpireMsg struct{ c confirmation }
	// quitRequestMsg: q on the help screen.
	quitRequestMsg struct{}
)

// filterModal edits the table's filter; the table follows every key.
type filterModal struct{ in textinput.Model }

func newFilterModal(value string) *filterModal {
	f := textinput.New()
	f.Prompt = "/ "
	f.Placeholder = "name, owner, state, library or kind: text, or a glob with * ? ["
	f.CharLimit = 200
	f.Cursor.SetMode(cursor.CursorStatic)
	f.SetValue(value)
	f.CursorEnd()
	f.Focus()
	return &filterModal{in: f}
}

func (f *filterModal) Update(ctx *programContext, msg tea.Msg) (bool, tea.Msg, tea.Cmd) {
	if k, ok := msg.(tea.KeyMsg); ok {
		switch {
		case key.Matches(k, ctx.keys.Submit):
			return true, nil, nil
		case key.Matches(k, ctx.keys.Cancel):
			return true, filterMsg{cleared: true}, nil
		}
	}
	before := f.in.Value()
	var cmd tea.Cmd
	f.in, cmd = f.in.Update(msg)
	if v := f.in.Value(); v != before {
		return false, filterMsg{value: v}, cmd
	}
	return false, nil, cmd
}

func (f *filterModal) View(ctx *programContext) string {
	return f.in.View() + ctx.st.Muted.Render("  enter keep · esc clear")
}

func (f *filterModal) SetSize(w, _ int) { f.in.Width = max(w-30, 5) }

func (f *filterModal) Place() (place, int) { return placeBar, 1 }

// helpModal is the `?` screen: every key, the states' glyphs and the filter rule;
// any key closes it.
type helpModal struct{ w, h int }

func newHelpModal(w, h int) *helpModal { return &helpModal{w: w, h: h} }

func (m *helpModal) Update(ctx *programContext, msg tea.Msg) (bool, tea.Msg, tea.Cmd) {
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		return false, nil, nil
	}
	if key.Matches(k, ctx.keys.Quit) {
		return true, quitRequestMsg{}, nil
	}
	return true, nil, nil
}

func (m *helpModal) SetSize(w, h int) { m.w, m.h = w, h }

func (m *helpModal) Place() (place, int) { return placeBody, m.h }

// filterRule is the filter's rule as the help screen says it.
const filterRule = "Filter: text matches anywhere, ignoring case; with * ? [ it is a glob (* spans /), also matched anywhere"

func (m *helpModal) View(ctx *programContext) string {
	st := ctx.st
	var b strings.Builder
	b.WriteString(st.Title.Render("Keys") + "\n\n")
	b.WriteString(m.keysView(ctx) + "\n\n")
	for _, text := range []string{
		"Locks: ● held on a majority · ◐ partial (fewer than a quorum) · ◆ contested · ○ orphaned (validity gone) · ⊘ revoked (taken until its holder's validity ends)",
		"Nodes: ● up · ◐ quarantined (restarted, may not vote yet) · ▲ degraded · ▲ slow (answers after the node timeout) · ✖ down",
		filterRule,
	} {
		for _, l := range wrapWords(text, m.w) {
			b.WriteString(st.Muted.Render(l) + "\n")
		}
	}
	if ctx.opts.ReadOnly {
		b.WriteString(st.Warn.Render("read-only: acquire, extend, release and force-expire are disabled") + "\n")
	}
	b.WriteString("\n" + st.Muted.Render("press any key to return"))
	body := strings.Split(b.String(), "\n")
	for len(body) < m.h {
		body = append(body, "")
	}
	return strings.Join(clip(body, m.w, m.h), "\n")
}

// keysView is the key groups side by side, in as many rows of groups as the
// screen's width needs (four across at 120 columns, two at 80): no key is cut.
func (m *helpModal) keysView(ctx *programContext) string {
	groups := ctx.keys.FullHelp()
	h := ctx.help
	h.Width = 0 // measured whole here: the help model would cut the table with "…"
	var rows []string
	for len(groups) > 0 {
		n := len(groups)
		for n > 1 && ansi.StringWidth(firstLine(h.FullHelpView(groups[:n]))) > m.w {
			n--
		}
		rows = append(rows, h.FullHelpView(groups[:n]))
		groups = groups[n:]
	}
	return strings.Join(rows, "\n\n")
}

// firstLine is s up to its first line break.
func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// wrapWords breaks text at spaces into lines of at most w columns (a word
// longer than w stays whole, for clip to cut).
func wrapWords(text string, w int) []string {
	var out []string
	line := ""
	for _, word := range strings.Fields(text) {
		switch {
		case line == "":
			line = word
		case ansi.StringWidth(line)+1+ansi.StringWidth(word) <= w:
			line += " " + word
		default:
			out = append(out, line)
			line = word
		}
	}
	return append(out, line)
}

// confirmation is a pending force-expire.
type confirmation struct {
	name   string
	holder string                // escaped
	seen   map[string]admin.Seen // what the row showed, per master: all that may be deleted
	unread map[string]string     // the masters the row could not read, with why: nothing is deleted there
	// now deletes at once instead of revoking (D rather than x).
	now bool
}

// newConfirmation is the force-expire of li as the row shows it, held by holder.
func newConfirmation(li *admin.LockInfo, holder string) confirmation {
	c := confirmation{name: li.Name, holder: holder, seen: map[string]admin.Seen{}, unread: map[string]string{}}
	for _, mv := range li.Masters {
		switch {
		case mv.Err != nil:
			c.unread[mv.Master] = mv.Err.Error()
		case mv.Present:
			c.seen[mv.Master] = admin.Seen{Type: mv.Type, Value: mv.Value}
		}
	}
	return c
}

// confirmModal asks y/n before a force-expire.
type confirmModal struct{ c confirmation }

func (m *confirmModal) Update(ctx *programContext, msg tea.Msg) (bool, tea.Msg, tea.Cmd) {
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		return false, nil, nil
	}
	switch {
	case key.Matches(k, ctx.keys.Confirm):
		return true, forceExpireMsg{c: m.c}, nil
	case key.Matches(k, ctx.keys.Deny):
		return true, cancelledMsg{action: "force-expire", name: m.c.name}, nil
	}
	return false, nil, nil
}

func (m *confirmModal) View(ctx *programContext) string {
	st := ctx.st
	if m.c.now {
		return st.Prompt.Render(fmt.Sprintf("Delete %s held by %s now?", escape.Line(m.c.name, 60), m.c.holder)) + " " + st.Bad.Render("y") + "/" + st.Good.Render("n") + "\n" +
			st.Bad.Render("  free at once, but the old holder may still act while its validity lasts; deletes only what is shown")
	}
	return st.Prompt.Render(fmt.Sprintf("Revoke %s held by %s?", escape.Line(m.c.name, 60), m.c.holder)) + " " + st.Bad.Render("y") + "/" + st.Good.Render("n") + "\n" +
		st.Muted.Render("  the holder is told to stop; the name stays taken until its validity ends or it releases; only what is shown")
}

func (m *confirmModal) SetSize(int, int) {}

func (m *confirmModal) Place() (place, int) { return placeBelow, 2 }
