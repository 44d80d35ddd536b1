package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/quorum"
)

// releaseArgs are the arguments of release.
type releaseArgs struct {
	namesArgs
	tokenFlags
}

func (a *releaseArgs) flags(f *Flags) {
	a.tokenFlags.flags(f)
	a.jsonFlag(f)
	a.common.flags(f)
}

var _ = define(&Command{
	Name:     "release",
	Synopsis: "release a lock we hold",
	Args:     "NAME [NAME...]",
	About: `
Deletes the lock NAME on every master where it still holds TOKEN
(compare-and-delete: another owner's lock is never touched). A lock that already
expired is not an error. Per master it reports released, missing, foreign (held
by another owner) or the error, on stderr; with -json as one JSON document on
stdout (name, key, ok, deleted, note, votes; names for several).

A release that a quorum of masters answered is a release: the lock is deleted on
every master that answered, and a master that did not answer keeps its copy until
its TTL ends (a note on stderr names it; "note" under -json).

It releases whatever the token took: every name of a multi-name hold (give all
of its names, in any order), the permit of a semaphore that the token holds (the
other permits are untouched), or a shared hold (the other shared holders keep
theirs); the token says which.`,
	Exits: []Exit{
		{0, "released (on every master that answered, a quorum), or already gone"},
		{1, `error: fewer than a quorum of masters answered (the lock stays in place on
the others until its TTL ends)`},
		exitBadInput,
		{4, "lost: the lock expired and another owner holds it on a majority now"},
	},
	Complete: Completion{LockName: true, Several: true},
}, withSession(runRelease))

// deleteJSON is the -json output of release and force-expire.
type deleteJSON struct {
	lockOutcome
	// Deleted counts the masters where the key was deleted (force-expire: where
	// the holder's value was deleted or replaced by its tombstone).
	Deleted int `json:"deleted"`
	// Action is what force-expire did: "revoked" (a tombstone keeps the name
	// taken until FreeAt, or until the holder releases) or "deleted" (free now).
	Action string     `json:"action,omitempty"`
	FreeAt *time.Time `json:"free_at,omitempty"`
	// Note names the masters a release could not reach when a quorum answered.
	Note string `json:"note,omitempty"`
	// Kind is the primitive force-expire deleted, when not a plain lock; Parts
	// report each of its keys (or shared holders).
	Kind  string       `json:"kind,omitempty"`
	Parts []deleteJSON `json:"parts,omitempty"`
	// Names are every name of a multi-name hold (absent for one name).
	Names []string `json:"names,omitempty"`
	// keys names what was deleted, for the human text: every key of a
	// multi-name hold, the slot of a permit (Key when empty).
	keys   string
	words  map[quorum.Outcome]string
	rep    *quorum.Report
	redact func(string) string
}

// human prints the count and one line per master on stderr: a report for the
// reader, not data for a script (that is -json).
func (d deleteJSON) human(env *Env) error {
	if d.rep == nil {
		return nil
	}
	keys := d.keys
	if keys == "" {
		keys = d.Key
	}
	verb := "deleted"
	if d.Action == actionRevoked {
		verb = "revoked"
	}
	fmt.Fprintf(env.Stderr, "%s: %s on %d of %d masters\n", escape.Text(keys), verb, d.Deleted, len(d.rep.Nodes))
	printReport(env.Stderr, d.rep, d.words, d.redact)
	return nil
}

var releaseWords = map[quorum.Outcome]string{
	quorum.OutcomeOK:      "released",
	quorum.OutcomeMissing: "missing (already gone)",
	quorum.OutcomeForeign: "held by another owner: not touched",
}

func runRelease(ctx context.Context, env *Env, s *lockSession, a *releaseArgs) error {
	cctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	name := a.names[0]
	if err := admin.CheckTokenFor(a.tok, a.names...); err != nil { // before a "missing" that would hide it
		return usagef("release %s: %v", strings.Join(a.names, " "), err)
	}
	rep, err := s.adm().ReleaseHeld(cctx, a.names, a.tok)
	if errors.Is(err, quorum.ErrInvalidArgument) { // names that the token does not hold
		return usagef("%s", s.redact(err.Error()))
	}
	note := ""
	if errors.Is(err, quorum.ErrPartialRelease) {
		// Released where a quorum answered: a note, not an error.
		note, err = s.redact(err.Error()), nil
	}
	held := s.heldKeys(a.names, a.tok, rep)
	if err == nil && rep != nil && countOutcome(rep, quorum.OutcomeForeign) >= rep.Quorum {
		err = failf(ExitLost, "%s: lost: your lock expired or was revoked, and another owner or its revocation holds it on %d of %d masters now; nothing of another owner deleted",
			held.text, countOutcome(rep, quorum.OutcomeForeign), len(rep.Nodes))
	}
	if note != "" && err == nil {
		fmt.Fprintf(env.Stderr, "redlock release: note: %s\n", escape.Text(note))
	}
	return s.finishDelete(env, s.deleteDoc(name, held, rep, releaseWords, note), err, a.json)
}

// heldKeys is what a token holds of names, for messages and documents: key is
// the key of the document (a permit's slot, the first key of a multi-name
// hold), text every key it covers, names every name of a multi-name hold.
type heldKeys struct {
	key, text string
	names     []string
}

// heldKeys names what token holds of names after a round that reported rep: the
// slot of a permit (rep's key), every key of a multi-name hold, else the key of
// names[0].
func (s *lockSession) heldKeys(names []string, token string, rep *quorum.Report) heldKeys {
	h := heldKeys{key: s.m.Key(names[0])}
	switch kind, _ := admin.HeldKind(token); {
	case len(names) > 1:
		keys := make([]string, len(names))
		for i, n := range names {
			keys[i] = s.m.Key(n)
		}
		h.text, h.names = lockKind{names: keys}.what(), names
	case kind == admin.KindSemaphore && rep != nil && strings.HasPrefix(rep.Key, h.key+":"):
		h.key = rep.Key
	}
	if h.text == "" {
		h.text = h.key
	}
	return h
}

// finishDelete shows the result of a release or force-expire: on failure the
// per-master lines still go out (on stderr, as on success), then the error.
func (s *lockSession) finishDelete(env *Env, doc deleteJSON, err error, asJSON bool) error {
	doc.OK = err == nil
	if err == nil {
		return show(env, asJSON, doc)
	}
	code := ExitError
	if ee, ok := err.(*exitError); ok {
		code = ee.code
	}
	err = redacted(err, s.redact)
	doc.Error = err.Error()
	_ = show(env, asJSON, doc) // the per-master lines, or the document with "ok": false
	return &exitError{code: code, err: err, doc: skipDoc{}}
}

// countOutcome counts the masters of rep with outcome o.
func countOutcome(rep *quorum.Report, o quorum.Outcome) int {
	n := 0
	for _, nr := range rep.Nodes {
		if nr.Outcome == o {
			n++
		}
	}
	return n
}

// deleteDoc is the document of a release or force-expire of name, held what it
// acts on, rep its round (nil when none ran).
func (s *lockSession) deleteDoc(name string, held heldKeys, rep *quorum.Report, words map[quorum.Outcome]string, note string) deleteJSON {
	doc := deleteJSON{lockOutcome: lockOutcome{Name: name, Key: held.key, Votes: s.report(rep)},
		Names: held.names, keys: held.text, Note: note, words: words, rep: rep, redact: s.redact}
	if rep != nil {
		doc.Deleted = rep.Votes
	}
	return doc
}
