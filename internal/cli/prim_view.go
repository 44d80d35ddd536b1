package cli

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/internal/human"
)

// The primitives as locks, watch and the console show them: a multi-name hold's
// names under one token, a semaphore's holders k/N, a name's shared holders with
// their count, an election's leader with its value and term.

// primitiveJSON is one primitive in the "primitives" member of locks -json and
// watch lines.
type primitiveJSON struct {
	Kind  string   `json:"kind"`
	Name  string   `json:"name"`
	Names []string `json:"names,omitempty"`
	// State is the state of its key (the worst of a multi-name hold's names); a
	// semaphore or shared key is "held" when any permit or holder is.
	State string `json:"state"`
	// Keys are the listed keys behind it (the names of the locks entries).
	Keys []string `json:"keys"`
	// Permits and Held: a semaphore's N and how many permits are held on a quorum;
	// for a shared key, Held is how many holders are.
	Permits int `json:"permits,omitempty"`
	Held    int `json:"held"`
	// ValidityMS is the shortest validity of its keys (a multi-name hold), of its
	// leader, or the longest of its holders.
	ValidityMS       float64            `json:"validity_ms"`
	Owner            *ownerJSON         `json:"owner,omitempty"`
	Value            string             `json:"value,omitempty"`
	Holders          []sharedHolderJSON `json:"holders,omitempty"`
	Permit           []permitJSON       `json:"permit_slots,omitempty"`
	Leader           *primLeaderJSON    `json:"leader,omitempty"`
	ExclusiveWaiting bool               `json:"exclusive_waiting,omitempty"`
	Error            string             `json:"error,omitempty"`
}

// sharedHolderJSON is one shared holder.
type sharedHolderJSON struct {
	Value      string     `json:"value"` // shortened (admin.Redact)
	Owner      *ownerJSON `json:"owner,omitempty"`
	Votes      int        `json:"votes"`
	ValidityMS float64    `json:"validity_ms"`
	// FreeAt: a revoked holder's tombstone, which keeps exclusive acquirers out
	// until then.
	FreeAt *time.Time `json:"free_at,omitempty"`
}

// permitJSON is one permit slot of a semaphore.
type permitJSON struct {
	Slot       int        `json:"slot"`
	State      string     `json:"state"`
	Votes      int        `json:"votes"`
	ValidityMS float64    `json:"validity_ms"`
	Value      string     `json:"value,omitempty"` // shortened
	Owner      *ownerJSON `json:"owner,omitempty"`
}

// primLeaderJSON is an election's leader.
type primLeaderJSON struct {
	Value      string     `json:"value"` // published by the leader: hostile, escape before printing
	Term       int64      `json:"term"`
	Since      *time.Time `json:"since,omitempty"`
	ValidityMS float64    `json:"validity_ms"`
	Votes      int        `json:"votes"`
}

// primitives reads what lst holds as primitives; a failed read is reported on
// stderr (prog names the command) and leaves what it could not read out.
func (s *lockSession) primitives(ctx context.Context, env *Env, prog string, lst *admin.Listing) []admin.Primitive {
	prims, err := s.adm().Primitives(ctx, lst)
	if err != nil {
		fmt.Fprintf(env.Stderr, "redlock %s: %s\n", prog, escape.Text(s.redact(err.Error())))
	}
	return prims
}

func (s *lockSession) primitiveJSON(p *admin.Primitive) primitiveJSON {
	out := primitiveJSON{Kind: string(p.Kind), Name: p.Name, Names: p.Names, Permits: p.Permits, Held: p.Held,
		ExclusiveWaiting: p.ExclusiveWaiting, Keys: []string{}}
	for _, li := range p.Locks {
		out.Keys = append(out.Keys, li.Name)
	}
	first := p.Locks[0]
	out.State, out.ValidityMS, out.Owner = string(p.State()), validityMS(first), toOwnerJSON(first.Owner)
	if out.State == string(admin.StateHeld) && (p.Kind == admin.KindLock || p.Kind == admin.KindMulti) {
		out.Held = 1
	}
	switch p.Kind {
	case admin.KindMulti:
		for _, li := range p.Locks[1:] {
			out.ValidityMS = min(out.ValidityMS, validityMS(li))
		}
		if first.Value != "" {
			out.Value = admin.Redact(first.Value)
		}
	case admin.KindSemaphore:
		out.ValidityMS, out.Owner = 0, nil
		for _, li := range p.Locks {
			slot := admin.ClassifyKey(li.Name, "string").Permit
			pj := permitJSON{Slot: slot, State: string(li.State), Votes: li.Votes, ValidityMS: validityMS(li), Owner: toOwnerJSON(li.Owner)}
			if li.Value != "" {
				pj.Value = admin.Redact(li.Value)
			}
			out.Permit = append(out.Permit, pj)
			out.ValidityMS = max(out.ValidityMS, pj.ValidityMS)
		}
	case admin.KindShared:
		out.ValidityMS, out.Owner = 0, nil
		for _, h := range p.Holders {
			out.Holders = append(out.Holders, sharedHolderJSON{Value: admin.Redact(h.Value), Owner: toOwnerJSON(h.Owner), Votes: h.Votes, ValidityMS: ms(h.Validity), FreeAt: jsonTime(h.FreeAt)})
			out.ValidityMS = max(out.ValidityMS, ms(h.Validity))
		}
		if p.HoldersErr != nil {
			out.Error = s.redact(p.HoldersErr.Error())
		}
	case admin.KindLeader:
		if l := p.Leader; l != nil {
			out.Leader = &primLeaderJSON{Value: l.Value, Term: l.Term, Since: jsonTime(l.Since), ValidityMS: durationMS(l.Validity), Votes: l.Votes}
			out.Held, out.ValidityMS = 1, durationMS(l.Validity)
		} else if p.LeaderErr != nil {
			out.Error = s.redact(p.LeaderErr.Error())
		}
	default:
		if first.Value != "" {
			out.Value = admin.Redact(first.Value)
		}
	}
	return out
}

// validityMS is a lock's validity for JSON: 0 unless held, -1 when it has no TTL.
func validityMS(li *admin.LockInfo) float64 { return durationMS(li.Validity) }

// durationMS is a validity for JSON: 0 when none is left, -1 without end
// (admin.NoExpiry: no TTL).
func durationMS(d time.Duration) float64 {
	switch {
	case d == admin.NoExpiry:
		return -1
	case d > 0:
		return ms(d)
	}
	return 0
}

// primitivesJSON is the "primitives" member: every primitive but the plain
// locks, which "locks" lists.
func (s *lockSession) primitivesJSON(prims []admin.Primitive) []primitiveJSON {
	out := []primitiveJSON{}
	for i := range prims {
		if prims[i].Kind != admin.KindLock {
			out = append(out, s.primitiveJSON(&prims[i]))
		}
	}
	return out
}

// kindText says what a primitive is, in the KIND column.
func kindText(p primitiveJSON) string {
	switch admin.PrimitiveKind(p.Kind) {
	case admin.KindMulti:
		return fmt.Sprintf("multi (%d names)", len(p.Names))
	case admin.KindSemaphore:
		if p.Permits > 0 {
			return fmt.Sprintf("semaphore %d/%d", p.Held, p.Permits)
		}
		return fmt.Sprintf("semaphore %d/?", p.Held)
	case admin.KindShared:
		return fmt.Sprintf("shared x%d", p.Held)
	case admin.KindLeader:
		if p.Leader != nil {
			return fmt.Sprintf("leader term %d", p.Leader.Term)
		}
		return "leader (none)"
	}
	if admin.ClassifyKey(p.Name, "string").Kind == admin.KeyPermit {
		return "stray permit" // a permit key of no slot of its semaphore (admin.Primitive.Permits)
	}
	return "lock"
}

// printPrimitives writes the listing as primitives: one row each, with the
// masters' view of a plain lock and the permits, holders or names of the others
// below it.
func (s *lockSession) printPrimitives(w io.Writer, lst *admin.Listing, prims []admin.Primitive) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tSTATE\tVOTES\tVALIDITY\tHOLDER")
	for i := range prims {
		p := &prims[i]
		pj := s.primitiveJSON(p)
		first := p.Locks[0]
		name := escape.Line(p.Name, 60)
		switch p.Kind {
		case admin.KindSemaphore:
			fmt.Fprintf(tw, "%s\t%s\t%s\t\t%s\t\n", name, kindText(pj), pj.State, msText(pj.ValidityMS))
			for j, li := range p.Locks {
				fmt.Fprintf(tw, "  permit %d\t\t%s\t%d/%d\t%s\t%s\n", pj.Permit[j].Slot, li.State, li.Votes, li.Total, validityText(li), holder(li))
			}
		case admin.KindShared:
			waiting := ""
			if p.ExclusiveWaiting {
				waiting = "an exclusive holder waits: no new shared holders"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t\t%s\t%s\n", name, kindText(pj), pj.State, msText(pj.ValidityMS), waiting)
			for _, h := range p.Holders {
				st := string(admin.StateHeld)
				switch {
				case !h.FreeAt.IsZero():
					st = string(admin.StateRevoked)
				case h.Validity <= 0:
					st = string(admin.StatePartial)
				}
				fmt.Fprintf(tw, "  holder\t\t%s\t%d/%d\t%s\t%s\n", st, h.Votes, first.Total, msText(ms(h.Validity)), sharedHolderText(h))
			}
		case admin.KindMulti:
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%s\t%s\n", name, kindText(pj), pj.State, first.Votes, first.Total, msText(pj.ValidityMS), holder(first))
			for _, li := range p.Locks {
				fmt.Fprintf(tw, "  %s\t\t%s\t%d/%d\t%s\t\n", escape.Line(li.Name, 60), li.State, li.Votes, li.Total, validityText(li))
			}
		case admin.KindLeader:
			who := "nobody leads"
			if l := p.Leader; l != nil {
				who = escape.Line(l.Value, 60)
				if l.Owner != nil && l.Value != fmt.Sprintf("%s pid %d", l.Owner.Host, l.Owner.PID) {
					who += " (" + escape.Line(fmt.Sprintf("%s pid %d", l.Owner.Host, l.Owner.PID), 40) + ")"
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%s\t%s\n", name, kindText(pj), first.State, first.Votes, first.Total, msText(pj.ValidityMS), who)
			printMasters(tw, first)
		default:
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%s\t%s\n", name, kindText(pj), first.State, first.Votes, first.Total, validityText(first), holder(first))
			printMasters(tw, first)
		}
	}
	_ = tw.Flush()
	switch {
	case lst.Answered() == 0:
		fmt.Fprintf(w, "no master answered (0 of %d): nothing can be listed\n", lst.Total)
	case len(prims) == 0:
		fmt.Fprintf(w, "no locks match %s on the %d of %d masters that answered\n", escape.Text(lst.Match), lst.Answered(), lst.Total)
	}
}

// printMasters writes one line per master under a lock: its value and PTTL.
func printMasters(tw io.Writer, li *admin.LockInfo) {
	for _, mv := range li.Masters {
		master := escape.Line(mv.Master, 30)
		switch {
		case mv.Err != nil:
			fmt.Fprintf(tw, "  %s\t\t(no answer)\t\t\t\n", master)
		case !mv.Present:
			fmt.Fprintf(tw, "  %s\t\t-\t\t\t\n", master)
		default:
			pttl := "no ttl"
			if mv.PTTL >= 0 {
				pttl = human.Duration(mv.PTTL)
			}
			val := escape.Line(admin.Redact(mv.Value), 60)
			if mv.Type != "string" {
				val = "(" + escape.Line(mv.Type, 20) + ")"
			}
			fmt.Fprintf(tw, "  %s\t\t%s\t\t%s\t%s\n", master, "present", pttl, val)
		}
	}
}

// sharedHolderText describes a shared holder: its owner, else its shortened value.
func sharedHolderText(h admin.SharedHolder) string {
	if !h.FreeAt.IsZero() {
		return revokedText(&admin.LockInfo{State: admin.StateRevoked, FreeAt: h.FreeAt})
	}
	if h.Owner == nil {
		return escape.Line(admin.Redact(h.Value), 60)
	}
	li := admin.LockInfo{Owner: h.Owner}
	return holder(&li)
}

// msText formats a validity in milliseconds for humans.
func msText(v float64) string {
	switch {
	case v < 0:
		return "no ttl"
	case v == 0:
		return "-"
	}
	return human.Duration(time.Duration(v * float64(time.Millisecond)))
}
