package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/internal/health"
	"github.com/redlock/redlock/internal/human"
	"github.com/redlock/redlock/quorum"
)

// extendArgs are the arguments of extend.
type extendArgs struct {
	namesArgs
	tokenFlags
	ttl time.Duration
}

func (a *extendArgs) flags(f *Flags) {
	a.tokenFlags.flags(f)
	f.Duration(&a.ttl, "ttl", 0, `new TTL (default: the TTL the lock was taken with, as its token
records; else the lock policy's ttl, else the cluster's ttl)`)
	a.jsonFlag(f)
	a.common.flags(f)
}

func (a *extendArgs) parse(p *parsed) error {
	if err := a.namesArgs.parse(p); err != nil {
		return err
	}
	return checkTTL(p, a.ttl)
}

var _ = define(&Command{
	Name:     "extend",
	Synopsis: "extend a lock we hold",
	Args:     "NAME [NAME...]",
	About: `
Resets the TTL of the lock NAME on every master where it still holds TOKEN (the
line printed by 'redlock acquire'). It never recreates a key that expired, so an
extend after the lock was lost fails, and never shortens a key: a TTL shorter than
what is left only lowers the reported validity (use force-expire or release to
end a lock early). The new validity goes to stderr, or with -json to stdout as one
JSON document (name, key, ok, valid_until, validity_ms, votes).

It extends whatever the token took: every name of a multi-name hold (give all of
its names, in any order), the permit of a semaphore that the token holds, or a
shared hold; the token says which.`,
	Exits: []Exit{
		{0, "extended"},
		{1, "error (fewer than a quorum of masters reachable, interrupted while reading the token)"},
		exitBadInput,
		{4, "lost: the lock is no longer held with TOKEN on a majority of the masters"},
	},
	Complete: Completion{LockName: true, Several: true},
}, withSession(runExtend))

// extendJSON is the -json output of extend.
type extendJSON struct {
	lockOutcome
	ValidUntil *time.Time `json:"valid_until,omitempty"`
	ValidityMS float64    `json:"validity_ms"`
	// Names are every name of a multi-name hold (absent for one name).
	Names []string `json:"names,omitempty"`
	// missed names the masters that did not vote, and why (stderr only).
	missed string
	// keys names what was extended (every key of a multi-name hold).
	keys string
}

func (d extendJSON) human(env *Env) error {
	fmt.Fprintf(env.Stderr, "extended %s (%s), valid until %s (%s)\n", escape.Text(d.keys), d.Votes.summary(),
		d.ValidUntil.Format(time.RFC3339Nano), human.Duration(time.Until(*d.ValidUntil)))
	if d.missed != "" {
		fmt.Fprintf(env.Stderr, "not extended on %s\n", escape.Text(d.missed))
	}
	return nil
}

func runExtend(ctx context.Context, env *Env, s *lockSession, a *extendArgs) error {
	token, name := a.tok, a.names[0]
	if err := admin.CheckTokenFor(token, a.names...); err != nil {
		return usagef("extend %s: %v", strings.Join(a.names, " "), err)
	}
	lockTTL, err := s.ttlForAll(a.names, a.ttl, a.f.given("ttl"))
	if err != nil {
		return err
	}
	if v, err := admin.ParseValue(token); err == nil && v.Owner.TTL > 0 && !a.f.given("ttl") {
		lockTTL = min(v.Owner.TTL, s.cluster.MaxTTL) // the TTL it was taken with
	}
	cctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	until, rep, err := s.adm().ExtendHeld(cctx, a.names, token, lockTTL)
	if errors.Is(err, quorum.ErrInvalidArgument) { // names that the token does not hold
		return usagef("%s", s.redact(err.Error()))
	}
	held := s.heldKeys(a.names, token, rep)
	doc := extendJSON{lockOutcome: lockOutcome{Name: name, Key: held.key, Votes: s.report(rep)}, Names: held.names, keys: held.text}
	if err != nil {
		code := ExitError
		if errors.Is(err, quorum.ErrLost) {
			code = ExitLost
		}
		err = redacted(err, s.redact)
		doc.Error = err.Error()
		return failDoc(code, err, doc)
	}
	doc.OK, doc.ValidUntil, doc.ValidityMS = true, &until, ms(time.Until(until))
	doc.missed = s.redact(health.MissedVotes(rep))
	return show(env, a.json, doc)
}
