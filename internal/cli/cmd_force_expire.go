package cli

import (
	"bufio"
	"context"
	"fmt"
	"strings"

	"github.com/redlock/redlock/quorum"
)

var forceExpireCmd = &Command{
	Name:     "force-expire",
	Synopsis: "admin: delete a lock on every master",
	Usage: `Usage: redlock force-expire NAME [-token TOKEN] [-yes] [-json] [-config PATH] [-var name=value] [-timeout D]

Deletes the lock NAME on every master, whoever holds it. This breaks the mutual
exclusion of the current holder: use it for locks left behind by a crashed
process. With -token only keys that still hold TOKEN are deleted
(compare-and-delete), so a lock taken since by someone else survives.

Without -yes it first shows who holds the lock and asks for "yes" on stdin;
anything else aborts. Per master it reports what it deleted; with -json as one
JSON document.

Flags:
  -token T     delete only where the value is still TOKEN
  -yes         do not ask
  -json        print one JSON document
` + commonUsage + `

Exit codes:
  0  done (also when there was nothing to delete)
  1  error (some master did not answer), or aborted at the prompt
  2  usage error or invalid topology file`,
}

func init() {
	forceExpireCmd.Run = runForceExpire
	register(forceExpireCmd)
}

var forceWords = map[quorum.Outcome]string{
	quorum.OutcomeOK:      "deleted",
	quorum.OutcomeMissing: "missing (nothing to delete)",
	quorum.OutcomeForeign: "holds another value: kept",
}

func runForceExpire(ctx context.Context, env *Env, args []string) int {
	cmd := forceExpireCmd
	fs := newFlagSet(cmd)
	var cf common
	cf.register(fs, env)
	token := fs.String("token", "", "delete only where the value is still TOKEN")
	yes := fs.Bool("yes", false, "do not ask")
	asJSON := fs.Bool("json", false, "JSON output")
	name, _, code, ok := parseLockArgs(env, cmd, fs, args)
	if !ok {
		return code
	}
	s, code := openSession(env, cmd, &cf)
	if s == nil {
		return code
	}
	defer s.close()
	if !*yes {
		if code, ok := s.confirmForceExpire(ctx, env, cmd, name, cf); !ok {
			return code
		}
	}
	cctx, cancel := context.WithTimeout(ctx, cf.timeout)
	defer cancel()
	rep, err := s.m.ForceExpire(cctx, name, *token)
	return s.finishDelete(env, cmd, name, rep, err, *asJSON, forceWords)
}

// confirmForceExpire shows who holds the lock (on stderr) and asks for "yes".
func (s *lockSession) confirmForceExpire(ctx context.Context, env *Env, cmd *Command, name string, cf common) (int, bool) {
	cctx, cancel := context.WithTimeout(ctx, cf.timeout)
	lst, err := s.m.Inspect(cctx, quorum.EscapeGlob(name))
	cancel()
	switch {
	case lst == nil:
		fmt.Fprintf(env.Stderr, "could not inspect %s: %s\n", name, s.redact(err.Error()))
	case lst.Lock(name) == nil:
		fmt.Fprintf(env.Stderr, "%s is not held on any master that answered (%d of %d)\n", s.m.Key(name), lst.Answered(), lst.Total)
	default:
		li := lst.Lock(name)
		fmt.Fprintf(env.Stderr, "%s is %s (%d/%d masters), validity %s, holder: %s\n", li.Key, li.State, li.Votes, li.Total, validityText(li), holder(li))
		one := &quorum.Listing{Match: lst.Match, Locks: []quorum.LockInfo{*li}}
		s.printLocks(env.Stderr, one)
	}
	if err != nil && lst != nil {
		fmt.Fprintf(env.Stderr, "warning: %s\n", s.redact(err.Error()))
	}
	fmt.Fprintf(env.Stderr, "Delete %s on every master? This breaks the holder's mutual exclusion. Type yes to confirm: ", s.m.Key(name))
	line, _ := bufio.NewReader(env.Stdin).ReadString('\n')
	if !strings.HasSuffix(line, "\n") {
		fmt.Fprintln(env.Stderr)
	}
	if strings.TrimSpace(line) != "yes" {
		fmt.Fprintln(env.Stderr, "aborted: nothing deleted")
		return ExitError, false
	}
	return ExitOK, true
}
