package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/quorum"
)

// locksPanel is the table of live locks with their validity countdowns.
type locksPanel struct{ w, h int }

// SetSize sets the table's width and height (title and column heads included).
func (p *locksPanel) SetSize(w, h int) { p.w, p.h = w, h }

func lockState(st Styles, s quorum.LockState) (string, lipgloss.Style) {
	switch s {
	case quorum.StateHeld:
		return "● held", st.Good
	case quorum.StatePartial:
		return "◐ partial", st.Warn
	case quorum.StateContested:
		return "◆ contested", st.Info
	case quorum.StateOrphaned:
		return "○ orphaned", st.Bad
	}
	return "? " + string(s), st.Muted
}

// columns returns the widths of the name, owner and bar columns for width w.
func (p *locksPanel) columns() (name, owner, barW int) {
	// cursor 2, state 12, votes 6, remaining 11, separators 5
	free := p.w - 2 - 12 - 6 - 11 - 5
	barW = clamp(free/5, 4, 30)
	free -= barW
	name = clamp(free/2, 6, 40)
	owner = max(free-name, 0)
	return name, owner, barW
}

// remaining is the validity left of a lock at now, from the deadline observed at the last poll.
func remaining(li *quorum.LockInfo, now time.Time) time.Duration { return li.Deadline().Sub(now) }

// window returns the rows [first, end) the table shows of n rows when row sel is
// selected: the selection is always on screen.
func (p *locksPanel) window(sel, n int) (first, end int) {
	rowsH := max(p.h-2, 1)
	if sel >= rowsH {
		first = sel - rowsH + 1
	}
	return first, min(first+rowsH, n)
}

// onScreen returns the names of the locks the table shows now, and of a page of
// rows on either side: when rows on screen go, those that move onto the screen in
// their place were read by the same poll.
func (m *Model) onScreen() []string {
	if m.table.h <= 0 {
		return nil
	}
	locks := m.visibleLocks()
	first, end := m.table.window(m.selIndex(locks), len(locks))
	page := end - first
	first, end = max(first-page, 0), min(end+page, len(locks))
	names := make([]string, 0, end-first)
	for i := first; i < end; i++ {
		names = append(names, locks[i].Name)
	}
	return names
}

// View renders the table; empty when it has no room.
func (p *locksPanel) View(m *Model) string {
	if p.h <= 0 {
		return ""
	}
	st := m.st
	locks := m.visibleLocks()
	title := "Locks"
	if m.focus == focusLocks {
		title = "▸ Locks"
	}
	count := fmt.Sprintf("  %d", len(locks))
	if f := m.filter.Value(); f != "" {
		count += fmt.Sprintf(" of %d matching %q", len(m.snap.Locks), f)
	}
	if n := len(m.held); n > 0 {
		count += fmt.Sprintf(" · %d held here", n)
	}
	count += " · " + m.sortLabel()
	if sc := m.snap.Scan; sc != nil && !sc.Complete {
		count += " · " + st.Warn.Render(fmt.Sprintf("scanning %d%%", int(clampF(sc.Fraction)*100)))
	}
	if s := m.snap; s.CPU > 0 && s.Over > 0 {
		count += fmt.Sprintf(" · cpu %.0f%%", 100*float64(s.CPU)/float64(s.Over))
	}
	if s := m.snap; s.Total > 0 && s.Answered < m.opts.Quorum {
		count += "  " + st.Bad.Render(fmt.Sprintf("⚠ listing incomplete: %d of %d masters answered", s.Answered, s.Total))
	}
	nameW, ownerW, barW := p.columns()
	head := "  " + strings.Join([]string{fit("NAME", nameW), fit("STATE", 12), fit("VOTES", 6), fit("OWNER", ownerW), fit("VALIDITY", barW+12)}, " ")
	lines := []string{st.Title.Render(title) + st.Muted.Render(count), st.Muted.Render(head)}
	if len(locks) == 0 {
		msg := "no locks"
		if !m.polled {
			msg = "waiting for the first poll…"
		} else if m.filter.Value() != "" {
			msg = "no lock matches the filter"
		}
		lines = append(lines, "  "+st.Muted.Render(msg))
		return strings.Join(clip(lines, p.w, p.h), "\n")
	}
	sel := m.selIndex(locks)
	first, end := p.window(sel, len(locks))
	rowsH := max(p.h-2, 1)
	for i := first; i < end; i++ {
		li := &locks[i]
		isSel := i == sel
		word, sty := lockState(st, li.State)
		owner := m.holder(li)
		if _, mine := m.held[li.Name]; !mine && li.Library != "" && li.Library != "redlock" && li.Owner == nil {
			owner = escape.Line(li.Library, 30)
		}
		left := remaining(li, m.now)
		frac := 0.0
		if sp := m.span[li.Name].max; sp > 0 {
			frac = float64(left) / float64(sp)
		}
		rem := fmt.Sprintf("%dms", max(left.Milliseconds(), 0))
		remSty := lipgloss.NewStyle()
		switch {
		case li.State != quorum.StateHeld:
			// No quorum validity: show how long the longest key lives on.
			rem, remSty = "—", st.Muted
			if ttl := maxPTTL(li) - m.now.Sub(li.ObservedAt); ttl > 0 {
				rem = fmt.Sprintf("ttl %dms", ttl.Milliseconds())
			}
		case left <= 0:
			rem = "expired"
			remSty = st.Bad
		}
		cells := []string{
			fit(escape.Text(li.Name), nameW),
			cell(sty, fit(word, 12), isSel && m.focus == focusLocks),
			fit(fmt.Sprintf("%d/%d", li.Votes, li.Total), 6),
			fit(owner, ownerW),
		}
		barStr := bar(st, frac, barW)
		if isSel && m.focus == focusLocks {
			barStr = strings.Repeat("█", int(clampF(frac)*float64(barW)+0.5)) + strings.Repeat("░", barW-int(clampF(frac)*float64(barW)+0.5))
		}
		cells = append(cells, barStr+" "+cell(remSty, fmt.Sprintf("%11s", rem), isSel && m.focus == focusLocks))
		lines = append(lines, cursorRow(st, strings.Join(cells, " "), p.w, isSel, m.focus == focusLocks))
	}
	if len(locks) > rowsH {
		lines[0] += st.Muted.Render(fmt.Sprintf("  (%d-%d)", first+1, min(first+rowsH, len(locks))))
	}
	return strings.Join(clip(lines, p.w, p.h), "\n")
}

func clampF(f float64) float64 { return min(max(f, 0), 1) }

// maxPTTL is the longest remaining TTL of the lock's keys, as observed.
func maxPTTL(li *quorum.LockInfo) time.Duration {
	var d time.Duration
	for _, mv := range li.Masters {
		if mv.Present && mv.PTTL > d {
			d = mv.PTTL
		}
	}
	return d
}
