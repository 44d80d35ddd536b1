package cli

import (
	"context"
	"fmt"

	"github.com/redlock/redlock/quorum"
)

var releaseCmd = &Command{
	Name:     "release",
	Synopsis: "release a lock we hold",
	Usage: `Usage: redlock release NAME -token TOKEN [-json] [-config PATH] [-var name=value] [-timeout D]

Deletes the lock NAME on every master where it still holds TOKEN
(compare-and-delete: another owner's lock is never touched). A lock that already
expired is not an error. Per master it reports released, missing, foreign (held
by another owner) or the error; with -json as one JSON document.

Flags:
  -token T     the lock's token (required)
  -json        print one JSON document
` + commonUsage + `

Exit codes:
  0  released, or already gone
  1  error: some master did not answer (its key expires with its TTL)
  2  usage error or invalid topology file`,
}

func init() {
	releaseCmd.Run = runRelease
	register(releaseCmd)
}

// releaseJSON is the -json output of release and force-expire.
type releaseJSON struct {
	Name    string      `json:"name"`
	Key     string      `json:"key"`
	Deleted int         `json:"deleted"`
	Error   string      `json:"error,omitempty"`
	Masters *reportJSON `json:"result,omitempty"`
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
	token := fs.String("token", "", "the lock's token")
	asJSON := fs.Bool("json", false, "JSON output")
	name, _, code, ok := parseLockArgs(env, cmd, fs, args)
	if !ok {
		return code
	}
	if *token == "" {
		return usageErrorf(env, cmd, "missing -token")
	}
	s, code := openSession(env, cmd, &cf)
	if s == nil {
		return code
	}
	defer s.close()
	cctx, cancel := context.WithTimeout(ctx, cf.timeout)
	defer cancel()
	rep, err := s.m.ReleaseToken(cctx, name, *token)
	return s.finishDelete(env, cmd, name, rep, err, *asJSON, releaseWords)
}

// finishDelete prints the result of a release or force-expire and returns the exit code.
func (s *lockSession) finishDelete(env *Env, cmd *Command, name string, rep *quorum.Report, err error, asJSON bool, words map[quorum.Outcome]string) int {
	out := releaseJSON{Name: name, Key: s.m.Key(name), Masters: s.report(rep)}
	if rep != nil {
		out.Deleted = rep.Votes
	}
	code := ExitOK
	if err != nil {
		out.Error = s.redact(err.Error())
		code = ExitError
	}
	if asJSON {
		if werr := writeJSON(env.Stdout, out); werr != nil {
			return s.fail(env, cmd, werr)
		}
	} else if rep != nil {
		fmt.Fprintf(env.Stdout, "%s: deleted on %d of %d masters\n", out.Key, out.Deleted, len(rep.Nodes))
		s.printReport(env.Stdout, rep, words)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "redlock %s: %s\n", cmd.Name, out.Error)
	}
	return code
}
