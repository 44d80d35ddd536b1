package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/internal/health"
	"github.com/redlock/redlock/quorum"
)

var acquireCmd = &Command{
	Name:     "acquire",
	Synopsis: "take a lock and print its token",
	Usage: `Usage: redlock acquire NAME [NAME...] [-permits N | -shared] [-ttl D] [-wait D] [-owner S] [-json] [-config PATH] [-var name=value] [-timeout D]

Takes the lock NAME on a quorum of the masters and prints its token on stdout
(one line, so TOKEN=$(redlock acquire NAME) captures it); the validity and the
votes go to stderr. With -json, stdout gets one JSON document: name, key, token,
valid_until, validity_ms, fence, votes (and names, permit, permits, shared for the
primitives). Keep the token secret: it releases the lock. The lock is not
extended: it expires after its TTL unless you run 'redlock extend NAME -token
TOKEN' (with the same NAMEs).

` + primNote + `

Flags:
  -ttl D       lock TTL (default: the lock policy's ttl, else the cluster's ttl)
  -wait D      keep trying until D has passed (default 0: one round)
  -owner S     owner label written into the lock value
` + primUsage + `
  -json        print one JSON document
` + commonUsage + `
                    (acquire: -wait comes on top of -timeout)

Ctrl-C while waiting releases whatever was set; nothing is left locked.

Exit codes:
  0  acquired
  1  error (fewer than a quorum of masters reachable, interrupted)
  2  usage error or invalid topology file
  3  held by another owner (every permit taken; an exclusive holder against
     -shared, shared holders against a plain lock), or -wait expired while it was`,
}

func init() {
	acquireCmd.Run = runAcquire
	register(acquireCmd)
}

// acquireJSON is the -json output of acquire.
type acquireJSON struct {
	Name       string     `json:"name"`
	Key        string     `json:"key"`
	Acquired   bool       `json:"acquired"`
	Token      string     `json:"token,omitempty"`
	ValidUntil *time.Time `json:"valid_until,omitempty"`
	ValidityMS int64      `json:"validity_ms"`
	Fence      int64      `json:"fence,omitempty"`
	// Names are every name of a multi-name hold (absent for one name).
	Names []string `json:"names,omitempty"`
	// Permits is the semaphore's permit count and Permit the slot held (0-based).
	Permits int         `json:"permits,omitempty"`
	Permit  *int        `json:"permit,omitempty"`
	Shared  bool        `json:"shared,omitempty"`
	Error   string      `json:"error,omitempty"`
	Votes   *reportJSON `json:"votes,omitempty"`
}

// kindJSON fills the primitive's members of an acquire document.
func (a *acquireJSON) kind(k lockKind, l *quorum.Lock) {
	if k.multi() {
		a.Names = k.names
	}
	a.Permits, a.Shared = k.permits, k.shared
	if l != nil && l.Permits() > 0 {
		p := l.Permit()
		a.Permit = &p
	}
}

func runAcquire(ctx context.Context, env *Env, args []string) int {
	cmd := acquireCmd
	fs := newFlagSet(cmd)
	var cf common
	cf.register(fs, env)
	ttl := fs.Duration("ttl", 0, "lock TTL")
	wait := fs.Duration("wait", 0, "keep trying until D has passed")
	owner := fs.String("owner", "", "owner label")
	var pf primFlags
	pf.register(fs)
	asJSON := cf.jsonFlag(fs, "JSON output")
	names, _, code, ok := parseLockNames(env, cmd, fs, args, true)
	if !ok {
		return code
	}
	if code, ok := checkTTLFlag(env, cmd, fs, *ttl); !ok {
		return code
	}
	if *wait < 0 {
		return usageErrorf(env, cmd, "-wait must not be negative, got %v", *wait)
	}
	s, code := openSession(env, cmd, &cf)
	if s == nil {
		return code
	}
	defer s.close()
	k, code, ok := pf.kind(env, cmd, s, names)
	if !ok {
		return code
	}
	lockTTL, code := s.ttlForAll(env, cmd, names, *ttl, flagGiven(fs, "ttl"))
	if code != ExitOK {
		return code
	}
	name := names[0]
	actx, cancel := context.WithTimeout(ctx, addSat(*wait, cf.timeout))
	defer cancel()
	l, err := acquireKind(actx, s.m, k, lockTTL, *wait, s.kindOptions(k, *owner)...)
	if err != nil {
		code := acquireExit(ctx, err)
		if *asJSON {
			doc := acquireJSON{Name: name, Key: s.m.Key(name), Error: s.redact(err.Error()), Votes: s.report(reportOf(err))}
			doc.kind(k, nil)
			_ = writeDoc(env.Stdout, doc)
		}
		if code == ExitNotHeld && !k.multi() && k.permits == 0 {
			fmt.Fprintf(env.Stderr, "redlock acquire: %s is %s: %s\n", escape.Text(name), s.heldBy(ctx, name, cf.timeout), escape.Text(s.redact(err.Error())))
		} else {
			fmt.Fprintf(env.Stderr, "redlock acquire: %s: %s\n", k.what(), escape.Text(s.redact(err.Error())))
		}
		return code
	}
	until := l.Until()
	votes := l.Votes()
	if *asJSON {
		doc := acquireJSON{Name: name, Key: l.Key(), Acquired: true, Token: l.Token(), ValidUntil: &until,
			ValidityMS: ms(time.Until(until)), Fence: l.Fence(), Votes: s.report(&votes)}
		doc.kind(k, l)
		err = writeDoc(env.Stdout, doc)
	} else {
		_, err = fmt.Fprintln(env.Stdout, l.Token())
		fmt.Fprintf(env.Stderr, "acquired %s%s (%d of %d masters), valid until %s (%v)\n", escape.Text(l.Key()), heldDetail(k, l), votes.Votes, len(votes.Nodes),
			until.Format(time.RFC3339Nano), time.Until(until).Round(time.Millisecond))
		if missed := health.MissedVotes(&votes); missed != "" {
			fmt.Fprintf(env.Stderr, "not acquired on %s\n", escape.Text(s.redact(missed)))
		}
	}
	if err != nil { // nobody learned the token: do not leave the lock behind
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
		defer rcancel()
		_ = l.Release(rctx)
		return s.fail(env, cmd, fmt.Errorf("write token: %w", err))
	}
	return ExitOK
}

// heldDetail says what else a primitive's acquisition holds, for acquire's
// message: " and 2 more names", " permit 1 of 3", " shared".
func heldDetail(k lockKind, l *quorum.Lock) string {
	switch {
	case k.multi():
		return fmt.Sprintf(" with %s", escape.Line(strings.Join(l.Names()[1:], ", "), 200))
	case l.Permits() > 0:
		return fmt.Sprintf(" permit %d of %d", l.Permit(), l.Permits())
	case l.Shared():
		return " shared"
	}
	return ""
}
