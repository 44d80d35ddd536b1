package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/quorum"
)

var electCmd = &Command{
	Name:     "elect",
	Synopsis: "campaign for leadership and run a command while leader",
	Usage: `Usage: redlock elect NAME [-value V] [-ttl D] [-wait D] [-max-hold D] [-margin D] [-grace D] [-conflict-exit-code N] [-owner S] [-config PATH] [-var name=value] [-timeout D] -- CMD [ARGS...]

Campaigns for the leadership of the election NAME, waiting as a candidate until
it leads (or -wait has passed), then runs CMD while it leads, under run's guard:
CMD never outlives the leadership. The leadership is kept alive in the background;
when it is lost (a majority of masters no longer holds it, or this process is
frozen past its validity) CMD's process group gets SIGTERM at once and SIGKILL
-grace later, never later than 100ms before the validity ends, even when elect
itself is killed or frozen. When CMD exits, elect resigns: the next candidate
leads at once, under a higher term.

Every leadership has a term, strictly increasing per election (the fencing
number): give it to the systems CMD writes to, so that they can refuse a deposed
leader's late writes. 'redlock leader NAME' shows the current leader, its value and
its term; 'redlock leader NAME -watch' follows every change.

CMD gets REDLOCK_NAME, REDLOCK_TOKEN, REDLOCK_VALID_UNTIL (as run),
REDLOCK_TERM and REDLOCK_FENCE (the term) and REDLOCK_VALUE (the value published).

Flags:
  -value V     what the leader publishes, for 'redlock leader' and the console to
               show: its address, say (default "HOST pid PID")
  -ttl D       leadership TTL: how long a dead leader keeps the office (default:
               the lock policy's ttl for NAME, else the cluster's ttl)
  -wait D      give up after campaigning for D and exit 3 (default 0: campaign
               until elected or interrupted)
  -max-hold D  resign after D: CMD gets SIGTERM -margin before election + D and
               elect exits 5 (default: no cap)
  -margin D    SIGTERM this long before the validity ends (default ttl/5)
  -grace D     time between SIGTERM and SIGKILL (default 5s, clipped to -margin - 100ms)
  -conflict-exit-code N
               exit N instead of 3 when not elected within -wait
  -owner S     owner label written into the leadership's value
  -metrics-addr ADDR
               serve this process's lock metrics (Prometheus) at http://ADDR/metrics
` + commonUsage + `
                    (elect: bounds the reads before the campaign; the campaign itself
                    waits as long as -wait says)

Exit codes (elect's own codes always come with a "redlock elect:" line on stderr):
  N    CMD's exit status (128+signal when it was killed by a signal)
  1    error (fewer than a quorum of masters reachable, interrupted before CMD started)
  2    usage error or invalid topology file
  3    not elected before -wait ran out (or -conflict-exit-code N)
  4    the leadership was lost while CMD ran (CMD was stopped), or elect was delayed
       so long after winning that the validity ended before CMD could start
  5    -max-hold or the lock policy's max_extensions ended the leadership (CMD was stopped)
  126  CMD could not be started; 127 CMD was not found`,
}

func init() {
	electCmd.Run = runElect
	register(electCmd)
}

// defaultLeaderValue is what a leader publishes when -value is not given.
func defaultLeaderValue() string {
	host, _ := os.Hostname()
	if host == "" {
		host = "unknown-host"
	}
	return fmt.Sprintf("%s pid %d", host, os.Getpid())
}

func runElect(ctx context.Context, env *Env, args []string) int {
	cmd := electCmd
	flags := newFlagSet(cmd)
	var cf common
	cf.register(flags, env)
	var gf guardFlags
	gf.register(flags)
	value := flags.String("value", "", "what the leader publishes")
	cf.metricsFlagOn(flags)
	names, argv, code, ok := parseLockNames(env, cmd, flags, args, false)
	if !ok {
		return code
	}
	if code, ok := gf.check(env, cmd, flags, argv); !ok {
		return code
	}
	if !flagGiven(flags, "value") {
		*value = defaultLeaderValue()
	}
	name := names[0]
	s, code := openSession(env, cmd, &cf)
	if s == nil {
		return code
	}
	defer s.close()
	el, err := s.m.Election(name)
	if err != nil {
		return usageErrorf(env, cmd, "election NAME %s: %v", escape.Text(name), err)
	}
	ttl, code := s.ttlFor(env, cmd, name, gf.ttl, flagGiven(flags, "ttl"))
	if code != ExitOK {
		return code
	}
	dl, code, ok := gf.deadlines(env, cmd, s, ttl)
	if !ok {
		return code
	}
	// Say who leads now, so that a waiting candidate is not silent.
	rctx, rcancel := context.WithTimeout(ctx, min(cf.timeout, 2*time.Second))
	if li, err := el.Leader(rctx); err == nil {
		fmt.Fprintf(env.Stderr, "redlock elect: campaigning for %s: %s leads (term %d)\n", escape.Text(name), escape.Line(li.Value, 80), li.Term)
	} else if errors.Is(err, quorum.ErrNoLeader) {
		fmt.Fprintf(env.Stderr, "redlock elect: campaigning for %s: nobody leads\n", escape.Text(name))
	} else {
		fmt.Fprintf(env.Stderr, "redlock elect: campaigning for %s, although the leader could not be read: %s\n", escape.Text(name), escape.Text(s.redact(err.Error())))
	}
	rcancel()
	opts := []quorum.LockOption{quorum.WithLossWatch(),
		quorum.WithKeepAlive(quorum.KeepAlive{MaxExtensions: s.cluster.PolicyFor(name).MaxExtensions, MaxHold: gf.maxHold})}
	if gf.owner != "" {
		opts = append(opts, quorum.WithLockOwner(gf.owner))
	}
	what := "the leadership of " + escape.Text(name)
	return holdAndRun(ctx, env, cmd, s, &gf, dl, what, argv, func(ctx context.Context) (*quorum.Lock, []string, error) {
		cctx, cancel := ctx, context.CancelFunc(func() {})
		if gf.wait > 0 {
			cctx, cancel = context.WithTimeout(ctx, gf.wait)
		}
		defer cancel()
		lead, err := el.Campaign(cctx, *value, ttl, opts...)
		if err != nil {
			if ctx.Err() == nil && cctx.Err() != nil {
				err = fmt.Errorf("%w: not elected after %v: %w", errWaitExpired, gf.wait, err)
			}
			return nil, nil, err
		}
		l := lead.Lock()
		term := strconv.FormatInt(lead.Term(), 10)
		fmt.Fprintf(env.Stderr, "redlock elect: leading %s, term %s, valid until %s\n", escape.Text(name), term, l.Until().Format(time.RFC3339Nano))
		extra := []string{"REDLOCK_TERM=" + term, "REDLOCK_VALUE=" + lead.Value()}
		if l.Fence() == 0 {
			extra = append(extra, "REDLOCK_FENCE="+term)
		}
		return l, extra, nil
	})
}
