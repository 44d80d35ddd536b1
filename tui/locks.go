package tui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/internal/human"
)

// tableVM is what the table's view reads besides the table itself: a narrow view
// of the root model, built for each frame.
type tableVM struct {
	now      time.Time
	polled   bool
	heldHere int
	mine     func(name string) bool
	set      *lockSet  // the rows' countdown spans
	snap     *Snapshot // for the title: scan progress, CPU, masters answered
	quorum   int
}

func lockState(st Styles, s admin.LockState) (string, lipgloss.Style) {
	switch s {
	case admin.StateHeld:
		return "● held", st.Good
	case admin.StatePartial:
		return "◐ partial", st.Warn
	case admin.StateContested:
		return "◆ contested", st.Info
	case admin.StateOrphaned:
		return "○ orphaned", st.Bad
	case admin.StateRevoked:
		return "⊘ revoked", st.Warn
	}
	return "? " + string(s), st.Muted
}

// stateAt is a lock's state at now: as observed, except that a held lock whose
// validity has run out since is orphaned (the documented state of "validity
// gone"), so that the state and the validity column never disagree.
func stateAt(li *admin.LockInfo, now time.Time) admin.LockState {
	if li.State == admin.StateHeld && li.Validity != admin.NoExpiry && remaining(li, now) <= 0 {
		return admin.StateOrphaned
	}
	return li.State
}

// columns returns the widths of the name, owner and bar columns. Below 100
// columns the validity bar goes (the validity stays as text) to leave the name
// and owner room beside the KIND column.
func (t *locksTable) columns() (name, owner, barW int) {
	// cursor 2, state 12, votes 6, kind, remaining 9, separators 5 (6 with a bar)
	free := t.w - 2 - 12 - 6 - kindW - 9 - 5
	if t.w >= 100 {
		barW = clamp(free/5, 4, 30)
		free -= barW + 1
	}
	name = clamp(free/2, 6, 40)
	owner = max(free-name, 0)
	return name, owner, barW
}

// validityW is the width of the VALIDITY column: the bar, if any, and the text.
func validityW(barW int) int {
	if barW > 0 {
		return barW + 1 + 9
	}
	return 9
}

// remaining is the validity left of a lock at now, from the deadline observed at the last poll.
func remaining(li *admin.LockInfo, now time.Time) time.Duration { return li.Deadline().Sub(now) }

// View renders the table; empty when it has no room.
func (t *locksTable) View(ctx *programContext, vm tableVM) string {
	if t.h <= 0 {
		return ""
	}
	st := ctx.st
	rows := t.rows()
	title := "Locks"
	if t.focused {
		title = "▸ Locks"
	}
	count := fmt.Sprintf("  %d", len(rows))
	if f := t.filter; f != "" {
		count += fmt.Sprintf(" of %d matching %s", t.listed(), escape.Cut(strconv.Quote(f), 40)) // Quote escapes every control
	}
	if vm.heldHere > 0 {
		count += fmt.Sprintf(" · %d held here", vm.heldHere)
	}
	count += " · " + t.sortLabel()
	if t.stale() { // the rows shown are those of the previous answer or key
		if t.shown.key.filter != t.key().filter {
			count += " (filtering…)"
		} else {
			count += " (sorting…)"
		}
	}
	if sc := vm.snap.Scan; sc != nil && !sc.Complete {
		count += " · " + st.Warn.Render(fmt.Sprintf("scanning %d%%", int(clampF(sc.Fraction)*100)))
	}
	if s := vm.snap; s.CPU > 0 && s.Over > 0 {
		count += fmt.Sprintf(" · cpu %.0f%%", 100*float64(s.CPU)/float64(s.Over))
	}
	if s := vm.snap; s.Total > 0 && s.Answered < vm.quorum {
		count += "  " + st.Bad.Render(fmt.Sprintf("⚠ listing incomplete: %d of %d masters answered", s.Answered, s.Total))
	}
	nameW, ownerW, barW := t.columns()
	head := "  " + strings.Join([]string{fit("NAME", nameW), fit("STATE", 12), fit("VOTES", 6), fit("KIND", kindW), fit("OWNER", ownerW), fit("VALIDITY", validityW(barW))}, " ")
	lines := []string{st.Title.Render(title) + st.Muted.Render(count), st.Muted.Render(head)}
	if len(rows) == 0 {
		msg := "no locks"
		if !vm.polled {
			msg = "waiting for the first poll…"
		} else if t.filter != "" {
			msg = "no lock matches the filter"
		}
		lines = append(lines, "  "+st.Muted.Render(msg))
		return strings.Join(clip(lines, t.w, t.h), "\n")
	}
	sel := t.selIndex()
	first, end := t.window(sel, len(rows))
	for i := first; i < end; i++ {
		lines = append(lines, t.row(ctx, vm, rows[i], i == sel, nameW, ownerW, barW))
	}
	if len(rows) > t.rowsH() {
		lines[0] += st.Muted.Render(fmt.Sprintf("  (%d-%d)", first+1, min(first+t.rowsH(), len(rows))))
	}
	return strings.Join(clip(lines, t.w, t.h), "\n")
}

// row renders one lock.
func (t *locksTable) row(ctx *programContext, vm tableVM, li *admin.LockInfo, isSel bool, nameW, ownerW, barW int) string {
	st, p := ctx.st, &ctx.paint
	hi := isSel && t.focused // the selection style covers the row's own styles
	state := stateAt(li, vm.now)
	word, sty := lockState(st, state)
	// The holder as the detail, the history and the confirmation name it, and as
	// the filter matches it.
	owner := holderOf(li, vm.mine(li.Name))
	left := remaining(li, vm.now)
	frac := 0.0
	if sp := vm.set.spanOf(li); sp > 0 {
		frac = float64(left) / float64(sp)
	}
	rem, remSty := validityAt(st, li, state, vm.now)
	cells := []string{
		fit(escape.Text(li.Name), nameW),
		p.cell(sty, fit(word, 12), hi),
		fit(fmt.Sprintf("%d/%d", li.Votes, li.Total), 6),
		fit(escape.Text(kindOf(vm.snap, li)), kindW),
		fit(owner, ownerW),
	}
	remCell := p.cell(remSty, fmt.Sprintf("%9s", rem), hi)
	if barW > 0 {
		barStr := bar(p, st, frac, barW)
		if hi {
			full := int(clampF(frac)*float64(barW) + 0.5)
			barStr = strings.Repeat("█", full) + strings.Repeat("░", barW-full)
		}
		remCell = barStr + " " + remCell
	}
	cells = append(cells, remCell)
	row := strings.Join(cells, " ")
	if hi {
		return p.render(st.Selected, fit("› "+row, t.w))
	}
	return cursorRow(st, row, t.w, isSel, t.focused)
}

// validityAt is the validity column of a lock in state (stateAt) at now: the
// validity left of a held lock; "expired" for one whose validity ran out since it
// was read; for a revoked one, when it is free; for the others, how long their
// longest key lives on.
func validityAt(st Styles, li *admin.LockInfo, state admin.LockState, now time.Time) (string, lipgloss.Style) {
	switch {
	case state == admin.StateHeld && li.Validity == admin.NoExpiry:
		return "no ttl", st.Warn
	case state == admin.StateHeld:
		return human.Duration(max(remaining(li, now), 0)), st.Plain
	case li.State == admin.StateHeld:
		return "expired", st.Bad
	case state == admin.StateRevoked:
		// The lock-delay: taken by the tombstone until it ends.
		if left := li.FreeAt.Sub(now); left > 0 {
			return "free in " + human.Duration(left), st.Warn
		}
		return "free", st.Muted
	}
	if ttl := maxPTTL(li) - now.Sub(li.ObservedAt); ttl > 0 {
		return "ttl " + human.Duration(ttl), st.Muted
	}
	return "—", st.Muted
}

func clampF(f float64) float64 { return min(max(f, 0), 1) }

// maxPTTL is the longest remaining TTL of the lock's keys, as observed.
func maxPTTL(li *admin.LockInfo) time.Duration {
	var d time.Duration
	for _, mv := range li.Masters {
		if mv.Present && mv.PTTL > d {
			d = mv.PTTL
		}
	}
	return d
}
