package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/internal/health"
)

// acquireArgs are the arguments of acquire.
type acquireArgs struct {
	lockArgs
	ttl, wait time.Duration
	owner     string
}

func (a *acquireArgs) flags(f *Flags) {
	f.Duration(&a.ttl, "ttl", 0, "lock TTL (default: the lock policy's ttl, else the cluster's ttl)")
	f.Duration(&a.wait, "wait", 0, "keep trying until D has passed (default 0: one round); comes on top of -timeout").atLeast(0)
	f.String(&a.owner, "owner", "S", "", "owner label written into the lock value")
	a.jsonFlag(f)
	a.common.flags(f)
}

func (a *acquireArgs) parse(p *parsed) error {
	if err := a.lockArgs.parse(p); err != nil {
		return err
	}
	return checkTTL(p, a.ttl)
}

var _ = define(&Command{
	Name:     "acquire",
	Synopsis: "take a lock and print its token",
	Args:     "NAME",
	About: `
Takes the lock NAME on a quorum of the masters and prints its token on stdout
(one line, so TOKEN=$(redlock acquire NAME) captures it); the validity and the
votes go to stderr. With -json, stdout gets one JSON document: name, key, ok,
token, valid_until, validity_ms, fence, votes. Keep the token secret: it releases
the lock. The lock is not extended: it expires after its TTL unless you run
'redlock extend NAME -token TOKEN'.

Ctrl-C while waiting releases whatever was set; nothing is left locked.`,
	Exits: []Exit{
		{0, "acquired"},
		{1, "error (fewer than a quorum of masters reachable, interrupted)"},
		exitBadInput,
		{3, "held by another owner, or -wait expired while it was"},
	},
	Complete: Completion{LockName: true},
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
	// missed names the masters that did not vote, and why (stderr only).
	missed string
}

// human prints the token on stdout and the validity on stderr.
func (d acquireJSON) human(env *Env) error {
	if _, err := fmt.Fprintln(env.Stdout, d.Token); err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "acquired %s (%s), valid until %s (%v)\n", escape.Text(d.Key), d.Votes.summary(),
		d.ValidUntil.Format(time.RFC3339Nano), time.Until(*d.ValidUntil).Round(time.Millisecond))
	if d.missed != "" {
		fmt.Fprintf(env.Stderr, "not acquired on %s\n", escape.Text(d.missed))
	}
	return nil
}

func runAcquire(ctx context.Context, env *Env, s *lockSession, a *acquireArgs) error {
	lockTTL, err := s.ttlFor(a.name, a.ttl, a.f.given("ttl"))
	if err != nil {
		return err
	}
	actx, cancel := context.WithTimeout(ctx, addSat(a.wait, a.timeout))
	defer cancel()
	l, err := waitAcquire(actx, s.m, a.name, lockTTL, a.wait, s.policyOptions(a.name, a.owner)...)
	if err != nil {
		code := acquireExit(ctx, err)
		if code == ExitNotHeld {
			err = fmt.Errorf("%s is %s: %w", a.name, s.heldBy(ctx, a.name, a.timeout), err)
		}
		err = redacted(err, s.redact)
		doc := acquireJSON{lockOutcome: lockOutcome{Name: a.name, Key: s.m.Key(a.name), Error: err.Error(), Votes: s.report(reportOf(err))}}
		return failDoc(code, err, doc)
	}
	until := l.Until()
	votes := l.Votes()
	doc := acquireJSON{lockOutcome: lockOutcome{Name: a.name, Key: l.Key(), OK: true, Votes: s.report(&votes)},
		Token: l.Token(), ValidUntil: &until, ValidityMS: ms(time.Until(until)), Fence: l.Fence(), missed: s.redact(health.MissedVotes(&votes))}
	if err := show(env, a.json, doc); err != nil { // nobody learned the token: do not leave the lock behind
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
		defer rcancel()
		_ = l.Release(rctx)
		return s.fail(ExitError, fmt.Errorf("write token: %w", err))
	}
	return nil
}
