package cli

import (
	"context"
	"fmt"
	"io"
	"iter"
	"strings"
	"time"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/internal/human"
	"github.com/redlock/redlock/quorum"
)

// locksArgs are the arguments of locks.
type locksArgs struct {
	common
	match string
}

func (a *locksArgs) flags(f *Flags) {
	f.String(&a.match, "match", "GLOB", "*", "only names matching GLOB (Redis glob syntax; default all)")
	a.jsonFlag(f)
	a.common.flags(f)
}

func (a *locksArgs) parse(p *parsed) error {
	if err := p.noArgs(" (use -match GLOB)"); err != nil {
		return err
	}
	return a.check()
}

var _ = define(&Command{
	Name:     "locks",
	Synopsis: "list live locks: quorum state, validity, owner, per-master values",
	About: `
Lists every lock under the cluster's key_prefix on every master (SCAN, never
KEYS): its quorum state, votes k/N, remaining validity from the quorum's view,
the owner (decoded from values written by redlock) or the library that wrote it
(redsync, node-redlock, redlock.net/pottery, redisson), and per master the value
(shortened: full values are secrets of their owners) and PTTL. A value is read
at most 512 bytes: a longer one shows its length. Keys longer than 1 MB are not
listed.

Plain locks are listed first, as they are read (a listing of 100,000 locks is
never held whole). The keys of the other primitives follow in a table of their
own, each shown for what it is (KIND): a multi-name hold (its names under one
token, each name below it); a semaphore (holders k/N, each permit below it); a
shared hold (its holders and their count, each below it, and whether an
exclusive holder waits); an election's leader (its value and term, read from a
quorum as 'redlock leader' does). A semaphore counts its own slots only
(below the limit most of its values declare): a permit key of another slot
is a "stray permit" of its own. With -json, "locks" lists every key and
"primitives" the same groups.

States:
  held       one value on a quorum of masters, with validity left
  partial    one value on fewer than a quorum (a round in progress, or leftovers
             that expire with their TTL)
  contested  different values on different masters, none on a quorum
  orphaned   leftovers that need an admin: keys of another type (a Redisson
             hash), keys without a TTL on a minority, or validity gone

Masters that do not answer are listed as such; the listing needs a quorum of them.`,
	Exits: []Exit{
		{0, "listed"},
		{1, "error: fewer than a quorum of masters answered (the partial listing is still printed)"},
		exitBadInput,
	},
}, withSession(runLocks))

// masterViewJSON is one master's view of one lock in -json output.
type masterViewJSON struct {
	Master  string `json:"master"`
	Present bool   `json:"present"`
	Type    string `json:"type,omitempty"`
	// Value is shortened with admin.Redact.
	Value string `json:"value,omitempty"`
	// ValueBytes is the value's length when it is longer than a listing reads.
	ValueBytes int64 `json:"value_bytes,omitempty"`
	// PTTLMS is the remaining TTL; -1 when the key has no TTL.
	PTTLMS float64 `json:"pttl_ms,omitempty"`
	Error  string  `json:"error,omitempty"`
}

// ownerJSON is a lock's owner metadata in -json output.
type ownerJSON struct {
	Label      string     `json:"owner,omitempty"`
	Host       string     `json:"host,omitempty"`
	PID        int        `json:"pid,omitempty"`
	AcquiredAt *time.Time `json:"acquired_at,omitempty"`
	TTLMS      float64    `json:"ttl_ms,omitempty"`
}

func toOwnerJSON(o *quorum.Owner) *ownerJSON {
	if o == nil {
		return nil
	}
	return &ownerJSON{Label: o.Label, Host: o.Host, PID: o.PID, AcquiredAt: jsonTime(o.At), TTLMS: ms(o.TTL)}
}

// lockJSON is one lock in -json output.
type lockJSON struct {
	Name    string     `json:"name"`
	Key     string     `json:"key"`
	State   string     `json:"state"`
	Votes   int        `json:"votes"`
	Quorum  int        `json:"quorum"`
	Total   int        `json:"total"`
	Value   string     `json:"value,omitempty"`
	Owner   *ownerJSON `json:"owner,omitempty"`
	Library string     `json:"library"`
	// ValidityMS is the remaining validity from the quorum's view; 0 unless held.
	ValidityMS float64    `json:"validity_ms"`
	ValidUntil *time.Time `json:"valid_until,omitempty"`
	NoExpiry   bool       `json:"no_expiry,omitempty"`
	// FreeAt is a revoked lock's end of its lock-delay (admin.LockInfo.FreeAt).
	FreeAt  *time.Time       `json:"free_at,omitempty"`
	Fence   int64            `json:"fence,omitempty"`
	Masters []masterViewJSON `json:"masters"`
}

// masterAnswerJSON says whether one master answered the listing.
type masterAnswerJSON struct {
	Master    string  `json:"master"`
	Answered  bool    `json:"answered"`
	Error     string  `json:"error,omitempty"`
	Keys      int     `json:"keys"`
	LatencyMS float64 `json:"latency_ms"`
}

// listingJSON is the -json output of locks.
type listingJSON struct {
	ObservedAt time.Time          `json:"observed_at"`
	Match      string             `json:"match"`
	Quorum     int                `json:"quorum"`
	Total      int                `json:"total"`
	Answered   int                `json:"answered"`
	Masters    []masterAnswerJSON `json:"masters"`
	Locks      []lockJSON         `json:"locks"`
	// Primitives are the locks seen as what wrote them (prim_view.go).
	Primitives []primitiveJSON `json:"primitives"`
	Error      string          `json:"error,omitempty"`
}

func (s *lockSession) lockJSON(li *admin.LockInfo) lockJSON {
	out := lockJSON{Name: li.Name, Key: li.Key, State: string(li.State), Votes: li.Votes, Quorum: li.Quorum, Total: li.Total,
		Owner: toOwnerJSON(li.Owner), Library: li.Library, Fence: li.Fence, Masters: []masterViewJSON{}}
	if li.Value != "" {
		out.Value = li.RedactedValue()
	}
	switch {
	case li.Validity == admin.NoExpiry:
		out.NoExpiry = true
	case li.Validity > 0:
		out.ValidityMS = ms(li.Validity)
		out.ValidUntil = jsonTime(li.Deadline())
	}
	out.FreeAt = jsonTime(li.FreeAt)
	for _, mv := range li.Masters {
		v := masterViewJSON{Master: mv.Master, Present: mv.Present, Type: mv.Type}
		if mv.Present {
			v.PTTLMS = ms(mv.PTTL)
			if mv.PTTL < 0 {
				v.PTTLMS = -1
			}
			switch {
			case mv.Value != "" && mv.Value == li.Value:
				v.Value = out.Value // the same value, redacted once
			case mv.Value != "":
				v.Value = admin.Redact(mv.Value)
			}
			if mv.Truncated {
				v.ValueBytes = mv.Size
			}
		}
		if mv.Err != nil {
			v.Error = s.redact(mv.Err.Error())
		}
		out.Masters = append(out.Masters, v)
	}
	return out
}

func (s *lockSession) listingJSON(lst *admin.Listing, err error) listingJSON {
	out := listingJSON{ObservedAt: lst.ObservedAt, Match: lst.Match, Quorum: lst.Quorum, Total: lst.Total, Answered: lst.Answered(),
		Locks: []lockJSON{}, Primitives: []primitiveJSON{}}
	for _, a := range lst.Masters {
		out.Masters = append(out.Masters, masterAnswerJSON{Master: a.Master, Answered: a.Answered, Error: s.redact(a.Error), Keys: a.Keys, LatencyMS: ms(a.Latency)})
	}
	for i := range lst.Locks {
		if !admin.Bookkeeping(&lst.Locks[i]) { // folded into their primitive
			out.Locks = append(out.Locks, s.lockJSON(&lst.Locks[i]))
		}
	}
	if err != nil {
		out.Error = s.redact(err.Error())
	}
	return out
}

// holder describes who holds a lock, in a few words, escaped for a terminal (owner
// labels and host names are written by other users) and cut to 80 columns.
func holder(li *admin.LockInfo) string { return escape.Line(holderRaw(li), 80) }

func holderRaw(li *admin.LockInfo) string {
	if li.State == admin.StateRevoked {
		return revokedText(li)
	}
	if li.Owner == nil {
		return li.Library
	}
	var parts []string
	if li.Owner.Label != "" {
		parts = append(parts, li.Owner.Label)
	}
	if li.Owner.Host != "" || li.Owner.PID != 0 {
		parts = append(parts, fmt.Sprintf("%s pid %d", li.Owner.Host, li.Owner.PID))
	}
	if !li.Owner.At.IsZero() {
		parts = append(parts, "since "+li.Owner.At.Format(time.RFC3339))
	}
	if len(parts) == 0 {
		return li.Library
	}
	return strings.Join(parts, ", ")
}

// revokedText says when a revoked lock's name is free: "revoked, free at
// 15:04:05 (in 12s)".
func revokedText(li *admin.LockInfo) string {
	in := max(0, time.Until(li.FreeAt)).Round(time.Second)
	return fmt.Sprintf("revoked, free at %s (in %s)", li.FreeAt.Format(time.TimeOnly), in)
}

// validityText formats the remaining validity of a lock for humans.
func validityText(li *admin.LockInfo) string {
	switch {
	case li.Validity == admin.NoExpiry:
		return "no ttl"
	case li.Validity > 0:
		return human.Duration(li.Validity)
	}
	return "-"
}

// locksView is the output of locks, written while the listing is iterated
// (locks_stream.go): a table, or one JSON document; the primitives' keys are
// kept aside as they pass and shown after the plain locks.
type locksView struct {
	s     *lockSession
	head  *admin.Listing
	locks iter.Seq[*admin.LockInfo]
	err   error
	prims *primitiveKeys
}

func (v locksView) human(env *Env) error {
	v.s.printLockTable(env.Stdout, v.head, v.locks, v.prims)
	return nil
}

// writeJSON streams the document, byte for byte what writeDoc would write.
func (v locksView) writeJSON(w io.Writer) error {
	return v.s.writeListingJSON(w, v.head, v.locks, v.err, v.prims)
}

func runLocks(ctx context.Context, env *Env, s *lockSession, a *locksArgs) error {
	cctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	lst, locks, err := s.adm().InspectStream(cctx, a.match)
	prims := s.primitiveKeys(cctx, env, "locks", lst)
	if werr := show(env, a.json, locksView{s: s, head: lst, locks: locks, err: err, prims: prims}); werr != nil {
		return s.fail(ExitError, werr)
	}
	for _, m := range lst.Masters {
		if !m.Answered && err == nil {
			fmt.Fprintf(env.Stderr, "redlock locks: %s\n", escape.Text(s.redact(m.Error)))
		}
	}
	if err != nil {
		return &exitError{code: ExitError, err: redacted(err, s.redact), doc: skipDoc{}}
	}
	return nil
}
