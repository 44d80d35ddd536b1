package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/quorum"
)

// Key handling: the keys of each mode.

// onKey handles a key press in the current mode.
func (m *Model) onKey(msg tea.KeyMsg) tea.Cmd {
	if msg.String() == "ctrl+c" && m.mode != modeQuitting {
		return m.quit()
	}
	if presses := burst(msg); len(presses) > 1 && m.mode == modeNormal {
		var cmds []tea.Cmd
		for _, p := range presses {
			cmds = append(cmds, m.onKey(p))
		}
		return tea.Batch(cmds...)
	}
	switch m.mode {
	case modeQuitting:
		return nil
	case modeHelp:
		m.mode = modeNormal
		if key.Matches(msg, m.keys.Quit) {
			return m.quit()
		}
		return nil
	case modeFilter:
		switch msg.String() {
		case "enter":
			m.mode = modeNormal
			m.filter.Blur()
		case "esc":
			m.mode = modeNormal
			m.filter.Blur()
			m.filter.SetValue("")
			m.setStatus(statusInfo, "filter cleared")
		default:
			var cmd tea.Cmd
			m.filter, cmd = m.filter.Update(msg)
			return cmd
		}
		return nil
	case modeAcquire:
		return m.onPromptKey(msg)
	case modeConfirm:
		return m.onConfirmKey(msg)
	}
	if m.opts.ReadOnly && writingKey(msg.String()) {
		m.setStatus(statusWarn, fmt.Sprintf("read-only console: %q (%s) is disabled", msg.String(), writingName(msg.String())))
		return nil
	}
	if cmd, ok := m.onNavKey(msg); ok {
		return cmd
	}
	switch {
	case key.Matches(msg, m.keys.Quit):
		return m.quit()
	case key.Matches(msg, m.keys.Help):
		m.mode = modeHelp
	case key.Matches(msg, m.keys.Tab):
		if m.focus == focusLocks {
			m.focus = focusNodes
		} else {
			m.focus = focusLocks
		}
	case key.Matches(msg, m.keys.Up):
		m.move(-1)
	case key.Matches(msg, m.keys.Down):
		m.move(1)
	case key.Matches(msg, m.keys.Filter):
		m.mode = modeFilter
		return m.filter.Focus()
	case key.Matches(msg, m.keys.Acquire):
		m.mode = modeAcquire
		m.layout()
		return m.prompt.Open("")
	case key.Matches(msg, m.keys.Extend), key.Matches(msg, m.keys.Release):
		li := m.selected()
		if li == nil {
			m.setStatus(statusWarn, "no lock selected")
			return nil
		}
		hl, mine := m.held[li.Name]
		if !mine {
			m.setStatus(statusWarn, fmt.Sprintf("%s is not held by this console: only its own locks can be extended or released (x force-expires)", escape.Line(li.Name, 60)))
			return nil
		}
		if key.Matches(msg, m.keys.Extend) {
			m.setStatus(statusInfo, "extending "+escape.Line(li.Name, 60)+"…")
			return m.extendCmd(hl)
		}
		m.setStatus(statusInfo, "releasing "+escape.Line(li.Name, 60)+"…")
		return m.releaseCmd(hl)
	case key.Matches(msg, m.keys.ForceExpire):
		li := m.selected()
		if li == nil {
			m.setStatus(statusWarn, "no lock selected")
			return nil
		}
		m.confirm = confirmation{name: li.Name, holder: m.holder(li), seen: map[string]quorum.Seen{}, unread: map[string]string{}}
		for _, mv := range li.Masters {
			switch {
			case mv.Err != nil:
				m.confirm.unread[mv.Master] = mv.Err.Error()
			case mv.Present:
				m.confirm.seen[mv.Master] = quorum.Seen{Type: mv.Type, Value: mv.Value}
			}
		}
		m.mode = modeConfirm
		m.layout()
	}
	return nil
}

func (m *Model) onExpired(msg expiredMsg) {
	if msg.rep == nil {
		m.setStatus(statusErr, fmt.Sprintf("force-expire %s: %v", msg.name, msg.err))
		return
	}
	deleted, changed := 0, 0
	var failed []string
	for _, n := range msg.rep.Nodes {
		switch n.Outcome {
		case quorum.OutcomeOK:
			deleted++
		case quorum.OutcomeForeign:
			changed++
		case quorum.OutcomeError:
			failed = append(failed, fmt.Sprintf("master %s: %s", escape.Text(n.Node), escape.Text(n.Err.Error())))
		case quorum.OutcomeMissing:
			if why, ok := msg.unread[n.Node]; ok {
				failed = append(failed, fmt.Sprintf("master %s: not read, so nothing deleted there (%s)", escape.Text(n.Node), escape.Line(why, 80)))
			}
		}
	}
	if changed > 0 {
		who := "nobody"
		if msg.now != nil {
			who = fmt.Sprintf("%s (%d/%d masters)", m.holder(msg.now), msg.now.Votes, msg.now.Total)
		}
		m.setStatus(statusWarn, fmt.Sprintf("force-expire %s: it changed hands since you confirmed; now held by %s. Deleted on %d/%d masters, nothing of the new holder",
			escape.Line(msg.name, 60), who, deleted, len(msg.rep.Nodes)))
		return
	}
	if deleted >= m.opts.Quorum || msg.err == nil {
		delete(m.held, msg.name)
	}
	text := fmt.Sprintf("force-expired %s: deleted on %d/%d masters", escape.Line(msg.name, 60), deleted, len(msg.rep.Nodes))
	if len(failed) > 0 {
		// The key stays on the masters that failed until its TTL ends.
		m.setStatus(statusWarn, text+"; "+strings.Join(failed, "; "))
		return
	}
	m.setStatus(statusOK, text)
}

func writingName(k string) string {
	return map[string]string{"a": "acquire", "e": "extend", "r": "release", "x": "force-expire"}[k]
}

func (m *Model) onAcquired(msg acquiredMsg) {
	if msg.err != nil {
		m.setStatus(statusErr, fmt.Sprintf("acquire %s: %v", msg.name, msg.err))
		return
	}
	m.held[msg.name] = heldLock{h: msg.held, ttl: msg.ttl}
	m.lockSel = msg.name
	until := msg.held.Until()
	m.setStatus(statusOK, fmt.Sprintf("acquired %s: %s, valid %s", msg.name, votes(msg.held.Votes()), short(until.Sub(m.opts.Now()))))
}

func (m *Model) onPromptKey(msg tea.KeyMsg) tea.Cmd {
	switch {
	case key.Matches(msg, m.keys.Cancel):
		m.mode = modeNormal
		m.layout()
		m.setStatus(statusInfo, "acquire cancelled")
		return nil
	case key.Matches(msg, m.keys.Submit):
		name, ttl, err := m.prompt.Values(m.opts.MaxTTL)
		if err != nil {
			m.prompt.err = err.Error()
			return nil
		}
		m.mode = modeNormal
		m.layout()
		m.setStatus(statusInfo, fmt.Sprintf("acquiring %s for %s…", name, ttl))
		return m.acquireCmd(name, ttl)
	}
	return m.prompt.Update(msg)
}

func (m *Model) setStatus(k statusKind, text string) { m.status = status{kind: k, text: text} }

func (m *Model) onConfirmKey(msg tea.KeyMsg) tea.Cmd {
	switch {
	case key.Matches(msg, m.keys.Confirm):
		m.mode = modeNormal
		m.layout()
		c := m.confirm
		m.setStatus(statusInfo, "force-expiring "+escape.Line(c.name, 60)+"…")
		return m.forceExpireCmd(c.name, c.seen, c.unread)
	case key.Matches(msg, m.keys.Deny):
		m.mode = modeNormal
		m.layout()
		m.setStatus(statusInfo, "force-expire of "+m.confirm.name+" cancelled")
	}
	return nil
}
