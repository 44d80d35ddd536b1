package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/quorum"
)

var releaseCmd = &Command{
	Name:     "release",
	Synopsis: "release a lock we hold",
	Usage: `Usage: redlock release NAME [NAME...] [-token TOKEN | -token - | -token-file PATH] [-json] [-config PATH] [-var name=value] [-timeout D]

Deletes the lock NAME on every master where it still holds TOKEN
(compare-and-delete: another owner's lock is never touched). A lock that already
expired is not an error. Per master it reports released, missing, foreign (held
by another owner) or the error; with -json as one JSON document.

It releases whatever the token took: every name of a multi-name hold (give all
of its names, in any order), the permit of a semaphore that the token holds (the
other permits are untouched), or a shared hold (the other shared holders keep
theirs); the token says which.

Flags:
` + tokenUsage + `
  -json        print one JSON document
` + commonUsage + `

A release that a quorum of masters answered is a release: the lock is deleted on
every master that answered, and a master that did not answer keeps its copy until
its TTL ends (a note on stderr names it; "note" under -json).

Exit codes:
  0  released (on every master that answered, a quorum), or already gone
  1  error: fewer than a quorum of masters answered (the lock stays in place on
     the others until its TTL ends)
  2  usage error or invalid topology file
  4  lost: the lock expired and another owner holds it on a majority now`,
}

func init() {
	releaseCmd.Run = runRelease
	register(releaseCmd)
}

// releaseJSON is the -json output of release and force-expire.
type releaseJSON struct {
	Name string `json:"name"`
	Key  string `json:"key"`
	// Kind is the primitive force-expire deleted, when not a plain lock; Parts
	// report each of its keys (or shared holders).
	Kind    string        `json:"kind,omitempty"`
	Parts   []releaseJSON `json:"parts,omitempty"`
	Deleted int           `json:"deleted"`
	Error   string        `json:"error,omitempty"`
	// Note names the masters a release could not reach when a quorum answered.
	Note  string      `json:"note,omitempty"`
	Votes *reportJSON `json:"votes,omitempty"`
}

var releaseWords = map[quorum.Outcome]string{
	quorum.OutcomeOK:      "released",
	quorum.OutcomeMissing: "missing (already gone)",
	quorum.OutcomeForeign: "held by another owner: not touched",
}

func runRelease(ctx context.Context, env *Env, args []string) int {
	cmd := releaseCmd
	fs := newFlagSet(cmd)
	var cf common
	cf.register(fs, env)
	var tf tokenFlags
	tf.register(fs)
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
	s, code := openSession(env, cmd, &cf)
	if s == nil {
		return code
	}
	defer s.close()
	cctx, cancel := context.WithTimeout(ctx, cf.timeout)
	defer cancel()
	name := names[0]
	rep, err := s.m.ReleaseHeld(cctx, names, token)
	if errors.Is(err, quorum.ErrInvalidOption) {
		return usageErrorf(env, cmd, "%s", escape.Text(s.redact(err.Error())))
	}
	code = s.finishDelete(env, cmd, name, rep, err, *asJSON, releaseWords)
	if code == ExitOK && rep != nil && countOutcome(rep, quorum.OutcomeForeign) >= rep.Quorum {
		fmt.Fprintf(env.Stderr, "redlock release: %s: lost: your lock expired and another owner holds it on %d of %d masters now; nothing deleted there\n",
			escape.Text(s.m.Key(name)), countOutcome(rep, quorum.OutcomeForeign), len(rep.Nodes))
		return ExitLost
	}
	return code
}

// finishDelete prints the result of a release or force-expire and returns the exit code.
func (s *lockSession) finishDelete(env *Env, cmd *Command, name string, rep *quorum.Report, err error, asJSON bool, words map[quorum.Outcome]string) int {
	out := releaseJSON{Name: name, Key: s.m.Key(name), Votes: s.report(rep)}
	if rep != nil {
		out.Deleted = rep.Votes
	}
	code := ExitOK
	note := ""
	if cmd == releaseCmd && errors.Is(err, quorum.ErrPartialRelease) {
		// Released where a quorum answered: a note, not an error.
		note, err = s.redact(err.Error()), nil
		out.Note = note
	}
	if err != nil {
		out.Error = s.redact(err.Error())
		code = ExitError
	}
	if asJSON {
		if werr := writeDoc(env.Stdout, out); werr != nil {
			return s.fail(env, cmd, werr)
		}
	} else if rep != nil {
		fmt.Fprintf(env.Stdout, "%s: deleted on %d of %d masters\n", escape.Text(out.Key), out.Deleted, len(rep.Nodes))
		s.printReport(env.Stdout, rep, words)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "redlock %s: %s\n", cmd.Name, escape.Text(out.Error))
	}
	if note != "" {
		fmt.Fprintf(env.Stderr, "redlock %s: note: %s\n", cmd.Name, escape.Text(note))
	}
	return code
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
