package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/internal/health"
)

var acquireCmd = &Command{
	Name:     "acquire",
	Synopsis: "take a lock and print its token",
	Usage: `Usage: redlock acquire NAME [-ttl D] [-wait D] [-owner S] [-json] [-config PATH] [-var name=value] [-timeout D]

Takes the lock NAME on a quorum of the masters and prints its token on stdout
(one line, so TOKEN=$(redlock acquire NAME) captures it); the validity and the
votes go to stderr. With -json, stdout gets one JSON document: name, key, token,
valid_until, validity_ms, fence, votes. Keep the token secret: it releases the lock.
The lock is not extended: it expires after its TTL unless you run
'redlock extend NAME -token TOKEN'.

Flags:
  -ttl D       lock TTL (default: the lock policy's ttl, else the cluster's ttl)
  -wait D      keep trying until D has passed (default 0: one round)
  -owner S     owner label written into the lock value
  -json        print one JSON document
` + commonUsage + `
                    (acquire: -wait comes on top of -timeout)

Ctrl-C while waiting releases whatever was set; nothing is left locked.

Exit codes:
  0  acquired
  1  error (fewer than a quorum of masters reachable, interrupted)
  2  usage error or invalid topology file
  3  held by another owner, or -wait expired while it was`,
}

func init() {
	acquireCmd.Run = runAcquire
	register(acquireCmd)
}

// acquireJSON is the -json output of acquire.
type acquireJSON struct {
	Name       string      `json:"name"`
	Key        string      `json:"key"`
	Acquired   bool        `json:"acquired"`
	Token      string      `json:"token,omitempty"`
	ValidUntil *time.Time  `json:"valid_until,omitempty"`
	ValidityMS int64       `json:"validity_ms"`
	Fence      int64       `json:"fence,omitempty"`
	Error      string      `json:"error,omitempty"`
	Votes      *reportJSON `json:"votes,omitempty"`
}

func runAcquire(ctx context.Context, env *Env, args []string) int {
	cmd := acquireCmd
	fs := newFlagSet(cmd)
	var cf common
	cf.register(fs, env)
	ttl := fs.Duration("ttl", 0, "lock TTL")
	wait := fs.Duration("wait", 0, "keep trying until D has passed")
	owner := fs.String("owner", "", "owner label")
	asJSON := cf.jsonFlag(fs, "JSON output")
	name, _, code, ok := parseLockArgs(env, cmd, fs, args)
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
	lockTTL, code := s.ttlFor(env, cmd, name, *ttl, flagGiven(fs, "ttl"))
	if code != ExitOK {
		return code
	}
	actx, cancel := context.WithTimeout(ctx, addSat(*wait, cf.timeout))
	defer cancel()
	l, err := waitAcquire(actx, s.m, name, lockTTL, *wait, s.policyOptions(name, *owner)...)
	if err != nil {
		code := acquireExit(ctx, err)
		if *asJSON {
			_ = writeDoc(env.Stdout, acquireJSON{Name: name, Key: s.m.Key(name), Error: s.redact(err.Error()), Votes: s.report(reportOf(err))})
		}
		if code == ExitNotHeld {
			fmt.Fprintf(env.Stderr, "redlock acquire: %s is %s: %s\n", escape.Text(name), s.heldBy(ctx, name, cf.timeout), escape.Text(s.redact(err.Error())))
		} else {
			fmt.Fprintf(env.Stderr, "redlock acquire: %s\n", escape.Text(s.redact(err.Error())))
		}
		return code
	}
	until := l.Until()
	votes := l.Votes()
	if *asJSON {
		err = writeDoc(env.Stdout, acquireJSON{Name: name, Key: l.Key(), Acquired: true, Token: l.Token(), ValidUntil: &until,
			ValidityMS: ms(time.Until(until)), Fence: l.Fence(), Votes: s.report(&votes)})
	} else {
		_, err = fmt.Fprintln(env.Stdout, l.Token())
		fmt.Fprintf(env.Stderr, "acquired %s (%d of %d masters), valid until %s (%v)\n", escape.Text(l.Key()), votes.Votes, len(votes.Nodes),
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
