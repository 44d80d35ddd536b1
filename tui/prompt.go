package tui

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/quorum"
)

// acquirePrompt asks for a lock name and a TTL.
type acquirePrompt struct {
	name, ttl  textinput.Model
	field      int // 0 name, 1 ttl
	defaultTTL time.Duration
	maxTTL     time.Duration
	err        string
	w          int
}

func newAcquirePrompt(defTTL, maxTTL time.Duration) *acquirePrompt {
	n := textinput.New()
	n.Prompt = "name: "
	n.Placeholder = "billing/42"
	n.CharLimit = quorum.MaxNameLen
	t := textinput.New()
	t.Prompt = "ttl: "
	t.CharLimit = 20
	// A static cursor: no blink timer, so the screen changes only when something does.
	n.Cursor.SetMode(cursor.CursorStatic)
	t.Cursor.SetMode(cursor.CursorStatic)
	return &acquirePrompt{name: n, ttl: t, defaultTTL: defTTL, maxTTL: maxTTL}
}

// SetSize sets the prompt's width.
func (p *acquirePrompt) SetSize(w, _ int) {
	p.w = w
	p.name.Width = clamp(w-30, 10, 60)
	p.ttl.Width = 10
}

// Place: the prompt takes three lines below the panels.
func (p *acquirePrompt) Place() (place, int) { return placeBelow, 3 }

// Open resets the prompt, proposing name and the default TTL, and focuses the name.
func (p *acquirePrompt) Open(name string) tea.Cmd {
	p.name.SetValue(name)
	p.name.CursorEnd()
	p.ttl.SetValue(p.defaultTTL.String())
	p.ttl.CursorEnd()
	p.err = ""
	p.field = 0
	p.ttl.Blur()
	return p.name.Focus()
}

// Update submits (a valid name and TTL), cancels, moves between the fields, or
// edits the focused one.
func (p *acquirePrompt) Update(ctx *programContext, msg tea.Msg) (bool, tea.Msg, tea.Cmd) {
	if k, ok := msg.(tea.KeyMsg); ok {
		switch {
		case key.Matches(k, ctx.keys.Cancel):
			return true, cancelledMsg{action: "acquire"}, nil
		case key.Matches(k, ctx.keys.Submit):
			name, ttl, err := p.Values()
			if err != nil {
				p.err = err.Error()
				return false, nil, nil
			}
			return true, acquireMsg{name: name, ttl: ttl}, nil
		case key.Matches(k, ctx.keys.NextField):
			p.field = 1 - p.field
			if p.field == 0 {
				p.ttl.Blur()
				return false, nil, p.name.Focus()
			}
			p.name.Blur()
			return false, nil, p.ttl.Focus()
		}
		p.err = ""
	}
	var cmd tea.Cmd
	if p.field == 0 {
		p.name, cmd = p.name.Update(msg)
	} else {
		p.ttl, cmd = p.ttl.Update(msg)
	}
	return false, nil, cmd
}

// Values validates the fields: a name that quorum.ValidateName accepts and a
// TTL that parses, is at least 1ms and at most the cluster's max_ttl (when set).
func (p *acquirePrompt) Values() (string, time.Duration, error) {
	name := strings.TrimSpace(p.name.Value())
	if name == "" {
		return "", 0, errors.New("name: enter a lock name")
	}
	if err := quorum.ValidateName(name); err != nil {
		return "", 0, fmt.Errorf("name: %w", err)
	}
	raw := strings.TrimSpace(p.ttl.Value())
	ttl, err := time.ParseDuration(raw)
	if err != nil {
		return "", 0, fmt.Errorf("ttl: %q is not a duration (try 30s, 1m, 1500ms)", raw)
	}
	if ttl < time.Millisecond {
		return "", 0, fmt.Errorf("ttl: %s must be at least 1ms", ttl)
	}
	if p.maxTTL > 0 && ttl > p.maxTTL {
		return "", 0, fmt.Errorf("ttl: %s is above the cluster's max_ttl %s", ttl, p.maxTTL)
	}
	return name, ttl, nil
}

// View renders the prompt. Its error may quote what was typed (as %q does: no raw
// control character); it is escaped again all the same.
func (p *acquirePrompt) View(ctx *programContext) string {
	st := ctx.st
	errLine := st.Muted.Render("  enter acquire · tab next field · esc cancel")
	if p.err != "" {
		errLine = st.Bad.Render("  ✖ " + escape.Text(p.err))
	}
	return st.Prompt.Render("Acquire") + "  " + p.name.View() + "\n" +
		"         " + p.ttl.View() + "\n" + errLine
}
