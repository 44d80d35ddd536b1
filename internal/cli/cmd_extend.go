package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/internal/health"
	"github.com/redlock/redlock/quorum"
)

var extendCmd = &Command{
	Name:     "extend",
	Synopsis: "extend a lock we hold",
	Usage: `Usage: redlock extend NAME [NAME...] [-token TOKEN | -token - | -token-file PATH] [-ttl D] [-json] [-config PATH] [-var name=value] [-timeout D]

Resets the TTL of the lock NAME on every master where it still holds TOKEN (the
line printed by 'redlock acquire'). It never recreates a key that expired, so an
extend after the lock was lost fails, and never shortens a key: a TTL shorter than
what is left only lowers the reported validity (use force-expire or release to
end a lock early). The new validity goes to stderr, or with
-json to stdout as one JSON document (name, key, extended, valid_until,
validity_ms, votes).

It extends whatever the token took: every name of a multi-name hold (give all of
its names, in any order), the permit of a semaphore that the token holds, or a
shared hold; the token says which.

Flags:
` + tokenUsage + `
  -ttl D       new TTL (default: the TTL the lock was taken with, as its token
               records; else the lock policy's ttl, else the cluster's ttl)
  -json        print one JSON document
` + commonUsage + `

Exit codes:
  0  extended
  1  error (fewer than a quorum of masters reachable)
  2  usage error or invalid topology file
  4  lost: the lock is no longer held with TOKEN on a majority of the masters`,
}

func init() {
	extendCmd.Run = runExtend
	register(extendCmd)
}

// extendJSON is the -json output of extend.
type extendJSON struct {
	Name       string     `json:"name"`
	Key        string     `json:"key"`
	Extended   bool       `json:"extended"`
	ValidUntil *time.Time `json:"valid_until,omitempty"`
	ValidityMS int64      `json:"validity_ms"`
	// Names are every name of a multi-name hold (absent for one name).
	Names []string    `json:"names,omitempty"`
	Error string      `json:"error,omitempty"`
	Votes *reportJSON `json:"votes,omitempty"`
}

func runExtend(ctx context.Context, env *Env, args []string) int {
	cmd := extendCmd
	fs := newFlagSet(cmd)
	var cf common
	cf.register(fs, env)
	var tf tokenFlags
	tf.register(fs)
	ttl := fs.Duration("ttl", 0, "new TTL")
	asJSON := cf.jsonFlag(fs, "JSON output")
	names, _, code, ok := parseLockNames(env, cmd, fs, args, true)
	if !ok {
		return code
	}
	token, err := tf.value(ctx, env)
	if errors.Is(err, errInterrupted) {
		fmt.Fprintf(env.Stderr, "redlock %s: interrupted while reading the token; nothing done\n", cmd.Name)
		return ExitError
	}
	if err != nil {
		return usageErrorf(env, cmd, "%v", err)
	}
	if code, ok := checkTTLFlag(env, cmd, fs, *ttl); !ok {
		return code
	}
	s, code := openSession(env, cmd, &cf)
	if s == nil {
		return code
	}
	defer s.close()
	name := names[0]
	lockTTL, code := s.ttlForAll(env, cmd, names, *ttl, flagGiven(fs, "ttl"))
	if code != ExitOK {
		return code
	}
	if v, err := quorum.ParseValue(token); err == nil && v.Owner.TTL > 0 && !flagGiven(fs, "ttl") {
		lockTTL = min(v.Owner.TTL, s.cluster.MaxTTL) // the TTL it was taken with
	}
	cctx, cancel := context.WithTimeout(ctx, cf.timeout)
	defer cancel()
	until, rep, err := s.m.ExtendHeld(cctx, names, token, lockTTL)
	out := extendJSON{Name: name, Key: s.m.Key(name), Votes: s.report(rep)}
	if len(names) > 1 {
		out.Names = names
	}
	code = ExitOK
	if err != nil {
		out.Error = s.redact(err.Error())
		code = ExitError
		if errors.Is(err, quorum.ErrInvalidOption) { // names that the token does not hold
			return usageErrorf(env, cmd, "%s", escape.Text(out.Error))
		}
		if errors.Is(err, quorum.ErrLost) {
			code = ExitLost
		}
		fmt.Fprintf(env.Stderr, "redlock extend: %s\n", escape.Text(out.Error))
	} else {
		out.Extended, out.ValidUntil, out.ValidityMS = true, &until, ms(time.Until(until))
		fmt.Fprintf(env.Stderr, "extended %s (%d of %d masters), valid until %s (%v)\n", escape.Text(out.Key), rep.Votes, len(rep.Nodes),
			until.Format(time.RFC3339Nano), time.Until(until).Round(time.Millisecond))
		if missed := health.MissedVotes(rep); missed != "" {
			fmt.Fprintf(env.Stderr, "not extended on %s\n", escape.Text(s.redact(missed)))
		}
	}
	if *asJSON {
		if err := writeDoc(env.Stdout, out); err != nil {
			return s.fail(env, cmd, err)
		}
	}
	return code
}
