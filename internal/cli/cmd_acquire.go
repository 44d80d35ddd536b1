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
)

// acquireArgs are the arguments of acquire.
type acquireArgs struct {
	namesArgs
	primArgs
	ttl, wait time.Duration
	owner     string
}

func (a *acquireArgs) flags(f *Flags) {
	f.Duration(&a.ttl, "ttl", 0, "lock TTL (default: the lock policy's ttl, else the cluster's ttl)")
	f.Duration(&a.wait, "wait", 0, waitHelp+`;
-timeout bounds the acquisition after D`).atLeast(0)
	f.String(&a.owner, "owner", "S", "", "owner label written into the lock value")
	a.primArgs.flags(f)
	a.jsonFlag(f)
	a.common.flags(f)
}

func (a *acquireArgs) parse(p *parsed) error {
	if err := a.namesArgs.parse(p); err != nil {
		return err
	}
	if !p.given("wait") {
		a.wait = waitForever
	}
	return checkTTL(p, a.ttl)
}

var _ = define(&Command{
	Name:     "acquire",
	Synopsis: "take a lock and print its token",
	Args:     "NAME [NAME...]",
	About: `
Takes the lock NAME on a quorum of the masters and prints its token on stdout
(one line, so TOKEN=$(redlock acquire NAME) captures it); the validity and the
votes go to stderr. With -json, stdout gets one JSON document: name, key, ok,
token, valid_until, validity_ms, fence, votes. Keep the token secret: it releases
the lock (and names, permit, permits, shared for the primitives). The lock is
not extended: it expires after its TTL unless you run 'redlock extend NAME -token
TOKEN' (with the same NAMEs).

` + primNote + `

Waiting: as flock, acquire waits while NAME is held, until it is free, and says
once on stderr who holds it; -wait 0 exits 3 at once instead (flock -n), -wait D
gives up after D (flock -w). Ctrl-C or SIGTERM while waiting releases whatever
was set and exits 1; nothing is left locked.`,
	Exits: []Exit{
		{0, "acquired"},
		{1, "error (fewer than a quorum of masters reachable, interrupted)"},
		exitBadInput,
		{3, `not acquired: held by another owner under -wait 0 (every permit taken; an
exclusive holder against -shared, shared holders against a plain lock), still
held when -wait D ran out, or NAME held as another kind of hold`},
	},
	Complete: Completion{LockName: true, Several: true},
}, withSession(runAcquire))

// lockOutcome is the shape every lock command's -json document starts with:
// the lock, whether the command did what it was asked ("ok"), why not, and the
// masters' votes.
type lockOutcome struct {
	Name  string      `json:"name"`
	Key   string      `json:"key"`
	OK    bool        `json:"ok"`
	Error string      `json:"error,omitempty"`
	Votes *reportJSON `json:"votes,omitempty"`
}

// acquireJSON is the -json output of acquire.
type acquireJSON struct {
	lockOutcome
	Token      string     `json:"token,omitempty"`
	ValidUntil *time.Time `json:"valid_until,omitempty"`
	ValidityMS float64    `json:"validity_ms"`
	Fence      int64      `json:"fence,omitempty"`
	// Names are every name of a multi-name hold (absent for one name).
	Names []string `json:"names,omitempty"`
	// Permits is the semaphore's permit count and Permit the slot held (0-based).
	Permits int  `json:"permits,omitempty"`
	Permit  *int `json:"permit,omitempty"`
	Shared  bool `json:"shared,omitempty"`
	detail  string
	// missed names the masters that did not vote, and why (stderr only).
	missed string
}

// kind fills the primitive's members of an acquire document.
func (d *acquireJSON) kind(k lockKind, t *taken) {
	if k.multi() {
		d.Names = k.names
	}
	d.Permits, d.Shared = k.permits, k.shared
	if t != nil {
		d.detail = heldDetail(k, t)
		if k.kind() == admin.KindSemaphore {
			p := t.slot
			d.Permit = &p
		}
	}
}

// human prints the token on stdout and the validity on stderr.
func (d acquireJSON) human(env *Env) error {
	if _, err := fmt.Fprintln(env.Stdout, d.Token); err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "acquired %s%s (%s), valid until %s (%s)\n", escape.Text(d.Key), d.detail, d.Votes.summary(),
		d.ValidUntil.Format(time.RFC3339Nano), human.Duration(time.Until(*d.ValidUntil)))
	if d.missed != "" {
		fmt.Fprintf(env.Stderr, "not acquired on %s\n", escape.Text(d.missed))
	}
	return nil
}

func runAcquire(ctx context.Context, env *Env, s *lockSession, a *acquireArgs) error {
	k, err := a.kind(s, a.names)
	if err != nil {
		return err
	}
	lockTTL, err := s.ttlForAll(a.names, a.ttl, a.f.given("ttl"))
	if err != nil {
		return err
	}
	name := a.names[0]
	actx, cancel := context.WithTimeout(ctx, addSat(a.wait, a.timeout))
	defer cancel()
	wait := waitPlan{d: a.wait, first: a.timeout, notice: s.waitNotice(env.Stderr, "acquire", k, a.wait, a.timeout)}
	t, err := acquireKind(actx, s.m, k, lockTTL, wait, s.kindOptions(k, a.owner)...)
	if err != nil {
		code := acquireExit(ctx, err)
		var kc *kindConflictError
		switch {
		case errors.As(err, &kc):
		case code == ExitNotHeld && k.byKey():
			err = fmt.Errorf("%s is %s: %w", name, s.heldBy(ctx, name, a.timeout), err)
		default:
			err = fmt.Errorf("%s: %w", k.what(), err)
		}
		err = redacted(err, s.redact)
		doc := acquireJSON{lockOutcome: lockOutcome{Name: name, Key: s.m.Key(name), Error: err.Error(), Votes: s.report(reportOf(err))}}
		doc.kind(k, nil)
		return failDoc(code, err, doc)
	}
	l := t.Lock
	until := l.Until()
	votes := l.Votes()
	doc := acquireJSON{lockOutcome: lockOutcome{Name: name, Key: l.Key(), OK: true, Votes: s.report(&votes)},
		Token: l.Token(), ValidUntil: &until, ValidityMS: ms(time.Until(until)), Fence: l.Fence(), missed: s.redact(health.MissedVotes(&votes))}
	doc.kind(k, &t)
	if err := show(env, a.json, doc); err != nil { // nobody learned the token: do not leave the lock behind
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
		defer rcancel()
		_ = l.Release(rctx)
		return s.fail(ExitError, fmt.Errorf("write token: %w", err))
	}
	return nil
}

// heldDetail says what else a primitive's acquisition holds, for acquire's
// message: " with b, c", " permit 1 of 3", " shared".
func heldDetail(k lockKind, t *taken) string {
	switch k.kind() {
	case admin.KindMulti:
		return " with " + escape.Line(strings.Join(k.sorted()[1:], ", "), 200)
	case admin.KindSemaphore:
		return fmt.Sprintf(" permit %d of %d", t.slot, k.permits)
	case admin.KindShared:
		return " shared"
	}
	return ""
}
