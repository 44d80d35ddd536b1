package tui

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/quorum"
)

// acquirePrompt asks for a lock name and a TTL; the confirmation of `x` shares its
// place on screen.
type acquirePrompt struct {
	name, ttl  textinput.Model
	field      int // 0 name, 1 ttl
	defaultTTL time.Duration
	err        string
	w          int
}

func newAcquirePrompt(defTTL time.Duration) acquirePrompt {
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
	return acquirePrompt{name: n, ttl: t, defaultTTL: defTTL}
}

// SetSize sets the prompt's width.
func (p *acquirePrompt) SetSize(w int) {
	p.w = w
	p.name.Width = clamp(w-30, 10, 60)
	p.ttl.Width = 10
}

// Height is the number of lines the prompt or confirmation takes in mode md.
func (p *acquirePrompt) Height(md mode) int {
	if md == modeConfirm {
		return 2
	}
	return 3
}

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

// Update moves between the fields (tab, shift+tab, up, down) and edits the focused one.
func (p *acquirePrompt) Update(msg tea.Msg) tea.Cmd {
	if k, ok := msg.(tea.KeyMsg); ok {
		switch k.String() {
		case "tab", "shift+tab", "up", "down":
			p.field = 1 - p.field
			if p.field == 0 {
				p.ttl.Blur()
				return p.name.Focus()
			}
			p.name.Blur()
			return p.ttl.Focus()
		}
		p.err = ""
	}
	var cmd tea.Cmd
	if p.field == 0 {
		p.name, cmd = p.name.Update(msg)
	} else {
		p.ttl, cmd = p.ttl.Update(msg)
	}
	return cmd
}

// Values validates the fields: a name that quorum.ValidateName accepts and a
// TTL that parses, is at least 1ms and at most maxTTL (when maxTTL > 0).
func (p *acquirePrompt) Values(maxTTL time.Duration) (string, time.Duration, error) {
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
	if maxTTL > 0 && ttl > maxTTL {
		return "", 0, fmt.Errorf("ttl: %s is above the cluster's max_ttl %s", ttl, maxTTL)
	}
	return name, ttl, nil
}

// View renders the acquire prompt or the force-expire confirmation.
func (p *acquirePrompt) View(m *Model) string {
	st := m.st
	if m.mode == modeConfirm {
		c := m.confirm
		how := "deletes only what is shown, where it is still there"
		return st.Prompt.Render(fmt.Sprintf("Force-expire %s held by %s?", escape.Line(c.name, 60), c.holder)) + " " + st.Bad.Render("y") + "/" + st.Good.Render("n") + "\n" +
			st.Muted.Render("  this breaks the holder's mutual exclusion; "+how)
	}
	errLine := st.Muted.Render("  enter acquire · tab next field · esc cancel")
	if p.err != "" {
		errLine = st.Bad.Render("  ✖ " + p.err)
	}
	return st.Prompt.Render("Acquire") + "  " + p.name.View() + "\n" +
		"         " + p.ttl.View() + "\n" + errLine
}
