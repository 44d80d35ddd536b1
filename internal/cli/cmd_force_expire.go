package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/quorum"
)

// forceExpireArgs are the arguments of force-expire.
type forceExpireArgs struct {
	lockArgs
	tokenFlags
	yes bool
	now bool
}

func (a *forceExpireArgs) flags(f *Flags) {
	a.tokenFlags.flags(f)
	a.optional = true
	f.Bool(&a.yes, "yes", "do not ask")
	f.Bool(&a.now, "now", "delete at once instead of revoking: the old holder may still act while its validity lasts")
	a.jsonFlag(f)
	a.common.flags(f)
}

func (a *forceExpireArgs) parse(p *parsed) error {
	// An admin action on any key locks lists: the name rule of acquire is not
	// checked.
	if err := a.lockArgs.parseWith(p, admin.ValidateKeyName); err != nil {
		return err
	}
	if a.tokenFlags.token == "-" && !a.yes {
		return usagef("-token - reads stdin, which the prompt needs too: add -yes")
	}
	return nil
}

var _ = define(&Command{
	Name:     "force-expire",
	Synopsis: "admin: revoke a lock on every master (-now: delete it)",
	Args:     "NAME",
	About: `
Revokes the lock NAME on every master: its holder is told to stop, and the name
stays taken until the holder's validity has surely ended (the lock-delay), so
that a holder that is paused, partitioned or gone never overlaps the next one.
Use it for locks left behind by a crashed process or a stuck holder. NAME is any
name that locks lists, including foreign keys that acquire's name rule refuses
(quote it: redlock force-expire 'nightly report'), and a name with control
characters as locks prints it escaped (redlock force-expire 'x\x1b]0;t\a').

It first reads the lock on every master and shows who holds it (on stderr), then
asks for "yes" on stdin unless -yes is given. It touches exactly what it showed:
on each master only the value it read there (compare-and-swap). When the lock
changed hands in between, nothing of the new holder is touched: it says who holds
it now and exits 1. With -token (or $REDLOCK_TOKEN) only keys that hold TOKEN are
touched. Per master it reports what it did (on stderr); with -json as one JSON
document on stdout ("action": "revoked" with "free_at", or "deleted").

Revoking replaces each value by its tombstone, a plain string that no acquirer
(of this tool or another) takes, for the key's remaining TTL plus the drift
budget; locks shows the name as revoked, with the time it is free. The holder
hears it (its loss watch: run stops its command) and its release deletes the
tombstone, so a live holder frees the name at once; one that never answers keeps
it only until its validity is over. A key without a TTL is deleted.

-now deletes at once instead: the name is free now, but the old holder may still
act while its validity lasts (the prompt says so).

NAME may be a primitive: a semaphore (every permit shown; with -token only that
holder's permit), a shared hold (each holder shown, one by one, never one that
came after: an exclusive acquirer stays out until the revoked holder's validity
ends; with -token only that holder), an election (the leadership shown: the
leader's command is stopped and the next candidate is elected under a higher
term), or one name of a multi-name hold (every name of the hold, as shown). With
-json, "parts" reports each key. A -token that nothing of NAME holds touches
nothing: exit 0 when the name is free, 1 when others hold it.`,
	Exits: []Exit{
		{0, "deleted (-now), or nothing to revoke: the name is free"},
		{1, `error (some master did not answer), aborted at the prompt, the lock
changed hands since it was shown (nothing of the new holder is touched), or
with -token, others hold the name and none of them has TOKEN (nothing touched)`},
		exitBadInput,
		{ExitRevoked, `revoked: the name stays taken until "free_at" (the holder's validity
plus the drift budget), or until the holder releases`},
	},
	Complete: Completion{LockName: true, AnyKey: true},
}, withSession(runForceExpire))

var forceWords = map[quorum.Outcome]string{
	quorum.OutcomeOK:      "deleted",
	quorum.OutcomeMissing: "missing (nothing to delete)",
	quorum.OutcomeForeign: "changed since it was shown: kept",
}

// tokenForceWords are the per-master words of force-expire -token: a master
// where another value is there holds another holder's, not a changed one.
func tokenForceWords(now bool) map[quorum.Outcome]string {
	words := maps.Clone(forceWordsFor(now))
	words[quorum.OutcomeForeign] = "held by another token: kept"
	return words
}

func runForceExpire(ctx context.Context, env *Env, s *lockSession, a *forceExpireArgs) error {
	token := a.tok
	name := s.shownName(ctx, a.name, a.timeout)
	failed := func(why string) error {
		return failDoc(ExitError, errors.New(why), deleteJSON{lockOutcome: lockOutcome{Name: name, Key: s.m.Key(name), Error: why}})
	}
	pctx, pcancel := context.WithTimeout(ctx, a.timeout)
	p, plst, perr := s.primitiveOf(pctx, name)
	pcancel()
	if perr != nil {
		fmt.Fprintf(env.Stderr, "warning: %s\n", escapeLines(s.redact(perr.Error())))
	}
	if p != nil {
		return s.forceExpirePrimitive(ctx, env, p, plst, forceOpts{token: token, yes: a.yes, now: a.now, json: a.json, timeout: a.timeout})
	}
	seen, unread, err := s.showForceExpire(ctx, env, name, a.timeout)
	if err != nil {
		return failed(err.Error() + ": nothing deleted")
	}
	if !a.yes && !confirm(ctx, env, s.m.Key(name), a.now) {
		return failed("aborted at the prompt: nothing deleted")
	}
	cctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	var rep *quorum.Report
	var free time.Time
	switch {
	case a.now && token != "":
		rep, err = s.adm().ForceExpire(cctx, name, token)
	case a.now:
		rep, err = s.adm().ForceExpireSeen(cctx, name, seen)
	case token != "":
		free, rep, err = s.adm().RevokeToken(cctx, name, token)
	default:
		free, rep, err = s.adm().RevokeSeen(cctx, name, seen)
	}
	if token == "" {
		if e := markUnread(rep, unread); e != nil && err == nil {
			err = e
		}
	}
	words := forceWordsFor(a.now)
	switch {
	case err != nil || rep == nil || countOutcome(rep, quorum.OutcomeForeign) == 0:
	case token == "":
		err = fmt.Errorf("%s changed hands since it was shown: %s; its keys were kept", s.m.Key(name), s.holderNow(ctx, name, a.timeout))
	case rep.Votes > 0:
		words = tokenForceWords(a.now) // the token's keys went; another's were kept
	default:
		// Another value than the token's is there: the name is not free, and
		// nothing of its holder was touched.
		words = tokenForceWords(a.now)
		err = fmt.Errorf("%s does not hold that token where it is held: %s; nothing of it was touched", s.m.Key(name), s.holderNow(ctx, name, a.timeout))
	}
	return s.finishForce(env, s.deleteDoc(name, heldKeys{key: s.m.Key(name), text: s.m.Key(name)}, rep, words, ""), free, err, a.json)
}

// shownName returns the name of the lock that locks showed as shown: shown itself,
// or, when shown holds escapes (locks prints a name with control characters as
// "x\x1b]0;t\a") and no lock has that literal name, the one listed lock whose
// escaped name is exactly shown.
func (s *lockSession) shownName(ctx context.Context, shown string, timeout time.Duration) string {
	if !strings.Contains(shown, `\`) {
		return shown
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if lst, _ := s.adm().Inspect(cctx, admin.EscapeGlob(shown)); lst == nil || lst.Lock(shown) != nil {
		return shown
	}
	lst, _ := s.adm().Inspect(cctx, shownGlob(shown))
	if lst == nil {
		return shown
	}
	var found []string
	for _, li := range lst.Locks {
		if escape.Text(li.Name) == shown {
			found = append(found, li.Name)
		}
	}
	if len(found) != 1 {
		return shown
	}
	return found[0]
}

// shownGlob returns a glob that matches every name whose escaped form
// (escape.Text) is shown: its escapes become *, the rest is matched literally.
func shownGlob(shown string) string {
	var b strings.Builder
	for i := 0; i < len(shown); i++ {
		c := shown[i]
		switch {
		case c != '\\' || i+1 == len(shown):
			if strings.IndexByte(`*?[]\`, c) >= 0 {
				b.WriteByte('\\')
			}
			b.WriteByte(c)
		case shown[i+1] == '\\':
			b.WriteString(`\\`)
			i++
		default:
			b.WriteByte('*')
			i++
			if shown[i] == 'x' || shown[i] == 'u' {
				for i+1 < len(shown) && strings.IndexByte("0123456789abcdef", shown[i+1]) >= 0 {
					i++
				}
			}
		}
	}
	return b.String()
}

// markUnread reports the masters that did not answer when the lock was read as
// errors: nothing was shown of them, so nothing was deleted there, and they may
// still hold the lock (they are not "missing"). It returns the round's error when
// there was such a master.
func markUnread(rep *quorum.Report, unread map[string]string) error {
	if rep == nil || len(unread) == 0 {
		return nil
	}
	for i := range rep.Nodes {
		n := &rep.Nodes[i]
		if why, ok := unread[n.Node]; ok && n.Outcome == quorum.OutcomeMissing {
			n.Outcome = quorum.OutcomeError
			n.Err = fmt.Errorf("not read, so nothing deleted there: %s", why)
		}
	}
	return &quorum.RoundError{Report: *rep, Kind: quorum.ErrUnavailable}
}

// showForceExpire reads the lock on every master, shows it on stderr, and returns
// what was seen per master (what force-expire may delete) and the masters that did
// not answer, with why.
func (s *lockSession) showForceExpire(ctx context.Context, env *Env, name string, timeout time.Duration) (map[string]admin.Seen, map[string]string, error) {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	lst, err := s.adm().Inspect(cctx, admin.EscapeGlob(name))
	cancel()
	seen := map[string]admin.Seen{}
	switch {
	case lst == nil:
		return nil, nil, fmt.Errorf("could not read %s: %s", s.m.Key(name), s.redact(err.Error()))
	case lst.Lock(name) == nil:
		fmt.Fprintf(env.Stderr, "%s is not held on any master that answered (%d of %d)\n", escape.Text(s.m.Key(name)), lst.Answered(), lst.Total)
	default:
		li := lst.Lock(name)
		fmt.Fprintf(env.Stderr, "%s is %s (%d/%d masters), validity %s, holder: %s\n", escape.Text(li.Key), li.State, li.Votes, li.Total, validityText(li), holder(li))
		one := &admin.Listing{Match: lst.Match, Quorum: lst.Quorum, Total: lst.Total, Masters: lst.Masters, Locks: []admin.LockInfo{*li}}
		s.printPrimitives(env.Stderr, one, []admin.Primitive{{Kind: admin.KindLock, Name: li.Name, Locks: []*admin.LockInfo{&one.Locks[0]}}})
		for _, mv := range li.Masters {
			if mv.Present {
				seen[mv.Master] = admin.Seen{Type: mv.Type, Value: mv.Value}
			}
		}
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "warning: %s\n", escapeLines(s.redact(err.Error())))
	}
	unread := map[string]string{}
	for _, a := range lst.Masters {
		if !a.Answered {
			unread[a.Master] = a.Error
		}
	}
	return seen, unread, nil
}

// confirm asks for "yes" on stdin, saying what a revocation does, or with now
// that the old holder may still act.
func confirm(ctx context.Context, env *Env, key string, now bool) bool {
	if now {
		fmt.Fprintf(env.Stderr, "Delete what is shown of %s now? The name is free at once, but the old holder may still act while its validity lasts (paused, partitioned or not listening): two holders may overlap. Type yes to confirm: ", escape.Text(key))
	} else {
		fmt.Fprintf(env.Stderr, "Revoke what is shown of %s? Its holder is told to stop; the name stays taken until the holder's validity has ended (plus the drift budget), or until it releases. Type yes to confirm: ", escape.Text(key))
	}
	line, _ := interruptible(ctx, func() (string, error) { return bufio.NewReader(env.Stdin).ReadString('\n') })
	if !strings.HasSuffix(line, "\n") {
		fmt.Fprintln(env.Stderr)
	}
	if strings.TrimSpace(line) != "yes" {
		fmt.Fprintln(env.Stderr, "aborted: nothing deleted")
		return false
	}
	return true
}

// holderNow describes who holds name now, for the message after a changed lock.
func (s *lockSession) holderNow(ctx context.Context, name string, timeout time.Duration) string {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	lst, _ := s.adm().Inspect(cctx, admin.EscapeGlob(name))
	if lst == nil || lst.Lock(name) == nil {
		return "nobody holds it now"
	}
	li := lst.Lock(name)
	return fmt.Sprintf("now held by %s (%d/%d masters)", holderRaw(li), li.Votes, li.Total)
}
