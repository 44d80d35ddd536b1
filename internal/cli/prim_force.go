package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/quorum"
)

// force-expire of a primitive: NAME names a semaphore, a shared hold, an
// election or one name of a multi-name hold. It shows the primitive, and deletes
// on each master exactly what it showed there (compare-and-delete), so a holder
// that came after is never touched.

// primitiveOf reads NAME's primitive when it is not a plain lock: nil for a
// plain lock or nothing at all. lst is the listing it was read from.
func (s *lockSession) primitiveOf(ctx context.Context, name string) (*admin.Primitive, *admin.Listing, error) {
	match := admin.EscapeGlob(name) + "*"
	for {
		lst, err := s.adm().Inspect(ctx, match)
		if lst == nil {
			return nil, nil, err
		}
		prims, perr := s.adm().Primitives(ctx, lst)
		for i := range prims {
			p := &prims[i]
			if p.Kind == admin.KindLock || !(p.Name == name || p.Kind == admin.KindMulti && slices.Contains(p.Names, name)) {
				continue
			}
			if p.Kind == admin.KindMulti && match != "*" {
				// A multi-name hold's other names can be anywhere: list them all.
				match = "*"
				break
			}
			return p, lst, errors.Join(err, perr)
		}
		if match != "*" || lst.Match == "*" {
			return nil, lst, nil
		}
	}
}

// seenOf is what a listing saw of li per master: with a token, only where the
// value is that token.
func seenOf(li *admin.LockInfo, token string) map[string]admin.Seen {
	seen := map[string]admin.Seen{}
	for _, mv := range li.Masters {
		if mv.Present && (token == "" || mv.Value == token) {
			seen[mv.Master] = admin.Seen{Type: mv.Type, Value: mv.Value}
		}
	}
	return seen
}

// forceOpts are force-expire's choices for a primitive.
type forceOpts struct {
	token    string
	yes, now bool
	json     bool
	timeout  time.Duration
}

// forceExpirePrimitive shows p, asks unless o.yes, and revokes (with o.now
// deletes) what it showed (with o.token, only that holder's part).
func (s *lockSession) forceExpirePrimitive(ctx context.Context, env *Env, p *admin.Primitive, lst *admin.Listing, o forceOpts) error {
	fmt.Fprintf(env.Stderr, "%s is %s:\n", escape.Text(p.Name), kindText(s.primitiveJSON(p)))
	s.printPrimitives(env.Stderr, lst, []admin.Primitive{*p})
	key := s.m.Key(p.Name)
	out := deleteJSON{lockOutcome: lockOutcome{Name: p.Name, Key: key}, Kind: string(p.Kind)}
	if !o.yes && !confirm(ctx, env, key, o.now) {
		out.Error = "aborted at the prompt: nothing deleted"
		return failDoc(ExitError, errors.New(out.Error), out)
	}
	cctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	type part struct {
		key  string
		rep  *quorum.Report
		free time.Time
		err  error
	}
	var parts []part
	switch p.Kind {
	case admin.KindShared:
		for _, h := range p.Holders {
			if o.token != "" && h.Value != o.token || !o.now && !h.FreeAt.IsZero() {
				continue // not that holder's; or revoked already (a tombstone)
			}
			pt := part{key: key + " holder " + admin.Redact(h.Value)}
			switch {
			case o.now && !h.FreeAt.IsZero():
				pt.rep, pt.err = s.adm().DeleteSharedTombstone(cctx, p.Name, h.Value)
			case o.now:
				pt.rep, pt.err = s.adm().ReleaseHeld(cctx, []string{p.Name}, h.Value)
			default:
				pt.free, pt.rep, pt.err = s.adm().RevokeShared(cctx, p.Name, h.Value)
			}
			parts = append(parts, pt)
		}
	default: // multi-name hold, semaphore, leadership: each key as seen
		for _, li := range p.Locks {
			seen := seenOf(li, o.token)
			if len(seen) == 0 {
				continue
			}
			pt := part{key: li.Key}
			if o.now {
				pt.rep, pt.err = s.adm().ForceExpireListed(cctx, li.Name, seen)
			} else {
				pt.free, pt.rep, pt.err = s.adm().RevokeListed(cctx, li.Name, seen)
			}
			parts = append(parts, pt)
		}
	}
	var errs []error
	var free time.Time
	changed := 0
	for _, pt := range parts {
		pj := deleteJSON{lockOutcome: lockOutcome{Name: p.Name, Key: pt.key, OK: pt.err == nil, Votes: s.report(pt.rep)}}
		markAction(&pj, pt.free)
		if pt.free.After(free) {
			free = pt.free
		}
		if pt.rep != nil {
			pj.Deleted = pt.rep.Votes
			out.Deleted += pt.rep.Votes
			changed += countOutcome(pt.rep, quorum.OutcomeForeign)
		}
		if pt.err != nil {
			pj.Error = s.redact(pt.err.Error())
			errs = append(errs, fmt.Errorf("%s: %s", pt.key, pj.Error))
		}
		out.Parts = append(out.Parts, pj)
		if !o.json && pt.rep != nil {
			fmt.Fprintf(env.Stderr, "%s: %s on %d of %d masters\n", escape.Text(pt.key), pj.Action, pj.Deleted, len(pt.rep.Nodes))
			printReport(env.Stderr, pt.rep, forceWordsFor(o.now), s.redact)
		}
	}
	if len(parts) == 0 {
		fmt.Fprintf(env.Stderr, "redlock force-expire: nothing of %s holds that token: nothing deleted\n", escape.Text(p.Name))
		if st := p.State(); st != admin.StateFree {
			// Others hold it: the name is not free, which exit 0 would say.
			errs = append(errs, fmt.Errorf("no holder of %s has that token (it is %s by others): nothing deleted", p.Name, st))
		}
	}
	if changed > 0 {
		errs = append(errs, fmt.Errorf("part of %s changed hands since it was shown: kept on %d master(s)", p.Name, changed))
	}
	err := errors.Join(errs...)
	markAction(&out, free)
	out.OK = err == nil
	if err != nil {
		out.Error = err.Error()
	}
	if o.json {
		if werr := writeDoc(env.Stdout, out); werr != nil {
			return s.fail(ExitError, werr)
		}
	}
	switch {
	case err != nil:
		return &exitError{code: ExitError, err: err, doc: skipDoc{}}
	case out.Action == actionRevoked:
		return revokedExit(env, key, free)
	}
	return nil
}
