package tui

import (
	"time"

	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/quorum"
)

// What the root model does on the writing keys and with the actions' results:
// every status line goes through statusLine.set, which escapes what it is given.

// quit releases the locks this console holds, then ends the program.
func (m *Model) quit() tea.Cmd {
	if len(m.hold.held) == 0 {
		return tea.Quit
	}
	m.hold.quitting = true
	m.modals = nil
	m.layout()
	m.status.set(statusInfo, "releasing %d lock(s) before quitting…", len(m.hold.held))
	return m.hold.releaseAllCmd()
}

// extendOrRelease extends or releases the selected lock, if this console holds it.
func (m *Model) extendOrRelease(extend bool) tea.Cmd {
	li := m.table.selected()
	if li == nil {
		m.status.set(statusWarn, "no lock selected")
		return nil
	}
	hl, mine := m.hold.held[li.Name]
	if !mine {
		m.status.set(statusWarn, "%s is not held by this console: only its own locks can be extended or released (x force-expires)", li.Name)
		return nil
	}
	if extend {
		m.status.set(statusInfo, "extending %s…", li.Name)
		return m.hold.extendCmd(hl)
	}
	m.status.set(statusInfo, "releasing %s…", li.Name)
	return m.hold.releaseCmd(hl)
}

func (m *Model) onAcquired(msg acquiredMsg) {
	if msg.err != nil {
		m.status.set(statusErr, "acquire %s: %s", msg.name, msg.err)
		return
	}
	m.hold.held[msg.name] = heldLock{h: msg.held, ttl: msg.ttl}
	m.heldChanged()
	m.table.sel = msg.name
	m.status.set(statusOK, "acquired %s: %s, valid %s", msg.name, votes(msg.held.Votes()), humanLeft(msg.held.Until(), m.ctx.opts.Now()))
}

// onExpired reports a force-expire: what was deleted where, what was not read,
// and whether the lock changed hands since it was confirmed.
func (m *Model) onExpired(msg expiredMsg) {
	if msg.rep == nil {
		m.status.set(statusErr, "force-expire %s: %s", msg.name, msg.err)
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
		if msg.holder != nil {
			who = fmt.Sprintf("%s (%d/%d masters)", m.holder(msg.holder), msg.holder.Votes, msg.holder.Total)
		}
		m.status.set(statusWarn, "force-expire %s: it changed hands since you confirmed; now held by %s; %s on %d/%d masters, nothing of the new holder",
			msg.name, shown(who), expiredVerb(msg), deleted, len(msg.rep.Nodes))
		return
	}
	if deleted >= m.ctx.opts.Quorum || msg.err == nil {
		delete(m.hold.held, msg.name)
		m.heldChanged()
	}
	if len(failed) > 0 {
		// The key stays on the masters that failed until its TTL ends.
		m.status.set(statusWarn, "force-expired %s: %s on %d/%d masters; %s", msg.name, expiredVerb(msg), deleted, len(msg.rep.Nodes), shown(strings.Join(failed, "; ")))
		return
	}
	if !msg.free.IsZero() {
		m.status.set(statusOK, "revoked %s on %d/%d masters: its holder is told to stop; taken until %s at the latest (D deletes now)",
			msg.name, deleted, len(msg.rep.Nodes), msg.free.Format(time.TimeOnly))
		return
	}
	m.status.set(statusOK, "force-expired %s: deleted on %d/%d masters", msg.name, deleted, len(msg.rep.Nodes))
}

// copyToken copies the token of the selected lock to the terminal's clipboard
// (OSC 52), only when this console holds it: another owner's token is a secret.
func (m *Model) copyToken() {
	li := m.table.selected()
	switch {
	case li == nil:
		m.status.set(statusWarn, "no lock selected")
	case m.ctx.opts.Copy == nil:
		m.status.set(statusWarn, "copying is not available in this terminal")
	default:
		hl, mine := m.hold.held[li.Name]
		if !mine {
			m.status.set(statusWarn, "only the token of a lock this console holds can be copied")
			return
		}
		if err := m.ctx.opts.Copy(hl.h.Token()); err != nil {
			m.status.set(statusErr, "copy: %s", err)
			return
		}
		m.status.set(statusOK, "copied the token of %s to the clipboard", li.Name)
	}
}

// holder describes who holds a lock, without its token (escaped).
func (m *Model) holder(li *admin.LockInfo) string { return holderOf(li, m.hold.mine(li.Name)) }

// holderOf describes who holds a lock, without its token: "this console" when
// mine, else the owner metadata (escaped: another user wrote it) or the library.
func holderOf(li *admin.LockInfo, mine bool) string {
	if mine {
		return "this console"
	}
	if li.State == admin.StateRevoked {
		return "revoked: free at " + li.FreeAt.Format(time.TimeOnly)
	}
	if li.Owner != nil {
		o := li.Owner
		s := o.Host
		if o.PID > 0 {
			s += fmt.Sprintf(":%d", o.PID)
		}
		if o.Label != "" {
			s = o.Label + "@" + s
		}
		return escape.Line(s, 60) // written by another user: never raw on screen
	}
	if known(li.Library) {
		return escape.Line(li.Library, 30) + " client"
	}
	return "unknown owner"
}

// expiredVerb says what a force-expire did where it succeeded.
func expiredVerb(msg expiredMsg) string {
	if msg.free.IsZero() {
		return "deleted"
	}
	return "revoked"
}
