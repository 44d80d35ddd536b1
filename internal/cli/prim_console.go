package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/quorum"
)

// The console's rows of the primitives' keys. The console lists keys; the rows
// on screen (read afresh every poll) say which primitive each key belongs to, in
// the holder column the console already has: a permit's slot and count, a
// leadership's value and term, a multi-name hold, a shared key's holders. A
// shared key held by shared holders on a quorum is held, not an orphaned key of
// another type; a leader's record says it is one. The console's force-expire of
// any of these rows deletes exactly what it showed (ForceExpireListed).

// annotateRows marks the primitives among the rows of fresh, in place: fresh is
// this poll's own Describe answer, shared with nobody. The shared keys' holders
// and the elections' leaders are read (one quorum read each); a failed read
// leaves its row as listed. It returns the KIND column of the rows it read as
// primitives (tui.Snapshot.Kinds), by row name.
func annotateRows(ctx context.Context, adm *admin.Admin, fresh *admin.Listing) map[string]string {
	rows := fresh.Locks
	prims, _ := adm.Primitives(ctx, fresh)
	kinds := map[string]string{}
	for i := range prims {
		p := &prims[i]
		for _, li := range p.Locks {
			tag, kind := "", string(p.Kind)
			switch p.Kind {
			case admin.KindSemaphore:
				tag = fmt.Sprintf("permit %d of %s (%d/%d held)", admin.ClassifyKey(li.Name, "string").Permit, p.Name, p.Held, p.Permits)
				kind = fmt.Sprintf("sem %d/%d", p.Held, p.Permits)
			case admin.KindLock:
				if kc := admin.ClassifyKey(li.Name, "string"); kc.Kind == admin.KeyPermit {
					// Listed apart from its semaphore: no slot of it.
					tag, kind = "stray permit key: no slot of semaphore "+kc.Name, "stray"
				}
			case admin.KindMulti:
				tag = fmt.Sprintf("multi-name hold of %d names", len(p.Names))
				kind = fmt.Sprintf("multi %d", len(p.Names))
			case admin.KindLeader:
				tag = "leader of " + p.Name + ", nobody leads on a quorum"
				if p.LeaderErr != nil && !errors.Is(p.LeaderErr, quorum.ErrNoLeader) {
					// Not read: who leads is not known, which is not "nobody".
					tag, kind = "leader of "+p.Name+", not read: "+p.LeaderErr.Error(), "leader ?"
				}
				if l := p.Leader; l != nil {
					// The value and term first: the owner column is narrow.
					tag = fmt.Sprintf("value %s, term %d, leader of %s", l.Value, l.Term, p.Name)
					kind = fmt.Sprintf("leader t%d", l.Term)
				}
			case admin.KindShared:
				tag = fmt.Sprintf("shared x%d", p.Held) + otherHolders(p)
				kind = fmt.Sprintf("shared %d", p.Held)
				if p.HoldersErr != nil {
					// Counted on the masters that answered: there may be more.
					tag = fmt.Sprintf("shared x%d or more (members not read on every master: %v)", p.Held, p.HoldersErr) + otherHolders(p)
					kind = fmt.Sprintf("shared %d+?", p.Held)
				}
				if p.ExclusiveWaiting {
					tag += ", an exclusive holder waits"
				}
				if p.Held > 0 {
					best := p.Holders[0]
					li.State, li.Votes, li.Validity, li.Owner = admin.StateHeld, best.Votes, best.Validity, best.Owner
				} else if st := p.State(); st != admin.StateFree {
					li.State = st
				}
			}
			tagRow(li, tag)
			kinds[li.Name] = kind
		}
	}
	for i := range rows {
		li := &rows[i]
		switch kc := admin.ClassifyKey(li.Name, li.KeyType()); kc.Kind {
		case admin.KeyTerm:
			li.Library = "record of election " + kc.Name + " (not a lock: force-expire " + kc.Name + ")"
		case admin.KeyWriterWaiting:
			li.Library = "an exclusive waiter's marker on " + kc.Name
		}
	}
	return kinds
}

// maxNamedHolders bounds the other shared holders a row names.
const maxNamedHolders = 8

// otherHolders names the shared holders of p after the first (whose owner the
// row shows): ", also rb, rc@vm pid 7", so that the filter finds the row by any
// of its holders. Labels first, else host and pid, else the shortened value.
func otherHolders(p *admin.Primitive) string {
	if len(p.Holders) < 2 {
		return ""
	}
	var who []string
	for _, h := range p.Holders[1:] {
		if len(who) == maxNamedHolders {
			who = append(who, fmt.Sprintf("+%d more", len(p.Holders)-1-maxNamedHolders))
			break
		}
		switch o := h.Owner; {
		case o != nil && o.Label != "":
			who = append(who, o.Label)
		case o != nil:
			who = append(who, fmt.Sprintf("%s pid %d", o.Host, o.PID))
		default:
			who = append(who, admin.Redact(h.Value))
		}
	}
	return ", also " + strings.Join(who, ", ")
}

// tagRow adds what the row's key belongs to after its holder's label (the
// label first: the KIND column already names the primitive, and the owner column
// is narrow at 80 columns): into a copy of its owner (the console escapes it),
// or as its library when no owner was decoded.
func tagRow(li *admin.LockInfo, tag string) {
	if tag == "" {
		return
	}
	if li.Owner == nil {
		li.Library = tag
		return
	}
	o := *li.Owner
	tag = "[" + tag + "]"
	if o.Label != "" {
		tag = o.Label + " " + tag
	}
	o.Label = tag
	li.Owner = &o
}
