package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/internal/human"
	"github.com/redlock/redlock/quorum"
)

// electArgs are the arguments of elect.
type electArgs struct {
	lockArgs
	guardArgs
	value string
}

func (a *electArgs) flags(f *Flags) {
	f.String(&a.value, "value", "V", "", `what the leader publishes, for 'redlock leader' and the console to
show: its address, say (default "HOST pid PID")`)
	a.guardArgs.flags(f, "elect")
	a.metricsFlagOn(f)
	a.common.flags(f)
}

// parse takes NAME and CMD, as run does (one NAME).
func (a *electArgs) parse(p *parsed) error {
	if err := oneName(p.pos, quorum.ValidateName); err != nil {
		return err
	}
	a.name = p.pos[0]
	if err := a.guardArgs.parse(p, "elect "+a.name); err != nil {
		return err
	}
	if !p.given("value") {
		a.value = defaultLeaderValue()
	}
	if !p.given("wait") {
		a.wait = waitForever
	}
	return a.check()
}

var _ = define(&Command{
	Name:     "elect",
	Synopsis: "campaign for leadership and run a command while leader",
	Args:     "NAME [--] CMD [ARGS...]",
	About: `
Campaigns for the leadership of the election NAME, waiting as a candidate until
it leads (or -wait has passed), then runs CMD while it leads, under run's guard:
CMD never outlives the leadership. The leadership is kept alive in the background;
when it is lost (a majority of masters no longer holds it, or this process is
frozen past its validity) CMD's process group gets SIGTERM at once and SIGKILL
-grace later, never later than 100ms before the validity ends, even when elect
itself is killed or frozen. When CMD exits, elect resigns: the next candidate
leads at once, under a higher term. As acquire and run, elect waits by default:
it campaigns until elected or interrupted; -wait 0 exits 3 at once when another
candidate leads (as flock -n), -wait D gives up after D. -ttl is how long a dead
leader keeps the office. As with run, the
"--" before CMD may be left out: CMD is the first word after NAME that is not one
of elect's flags ("redlock elect crond sh -c 'run-parts /etc/cron.hourly'").

Every leadership has a term, strictly increasing per election (the fencing
number): give it to the systems CMD writes to, so that they can refuse a deposed
leader's late writes. 'redlock leader NAME' shows the current leader, its value and
its term; 'redlock leader NAME -watch' follows every change.

CMD gets REDLOCK_NAME, REDLOCK_TOKEN, REDLOCK_VALID_UNTIL (as run),
REDLOCK_TERM and REDLOCK_FENCE (the term) and REDLOCK_VALUE (the value published).`,
	ExitNote: `Elect's own codes are always explained by a "redlock elect:" line on stderr.`,
	Exits: []Exit{
		{-1, "CMD's exit status (128+signal when it was killed by a signal)"},
		{1, "error (fewer than a quorum of masters reachable, interrupted before CMD started)"},
		exitBadInput,
		{3, "not elected: another leads under -wait 0, or -wait D ran out (or -conflict-exit-code N)"},
		{4, `the leadership was lost while CMD ran (CMD was stopped), or elect was delayed
so long after winning that the validity ended before CMD could start`},
		{5, "-max-hold or the lock policy's max_extensions ended the leadership (CMD was stopped)"},
		{126, "CMD could not be started"},
		{127, "CMD was not found"},
	},
	Complete: Completion{LockName: true, Elections: true},
}, withSession(runElect))

// defaultLeaderValue is what a leader publishes when -value is not given.
func defaultLeaderValue() string {
	host, _ := os.Hostname()
	if host == "" {
		host = "unknown-host"
	}
	return fmt.Sprintf("%s pid %d", host, os.Getpid())
}

func runElect(ctx context.Context, env *Env, s *lockSession, a *electArgs) error {
	name := a.name
	el, err := s.m.Election(name)
	if err != nil {
		return usagef("election NAME %s: %v", name, err)
	}
	ttl, err := s.ttlFor(name, a.ttl, a.gf.given("ttl"))
	if err != nil {
		return err
	}
	dl, err := a.deadlines(env, s, "elect", ttl)
	if err != nil {
		return err
	}
	// Say who leads now, so that a waiting candidate is not silent.
	rctx, rcancel := context.WithTimeout(ctx, min(a.timeout, 2*time.Second))
	li, err := el.Leader(rctx)
	switch {
	case err == nil && a.wait == 0: // as flock -n: another leads, give up at once
		rcancel()
		return s.fail(a.conflict, fmt.Errorf("not elected: %s leads %s (term %d), and -wait 0 does not wait: %w", li.Value, name, li.Term, quorum.ErrHeld))
	case err == nil:
		fmt.Fprintf(env.Stderr, "redlock elect: campaigning for %s: %s leads (term %d)\n", escape.Text(name), escape.Line(li.Value, 80), li.Term)
	case errors.Is(err, quorum.ErrNoLeader):
		fmt.Fprintf(env.Stderr, "redlock elect: campaigning for %s: nobody leads\n", escape.Text(name))
	default:
		fmt.Fprintf(env.Stderr, "redlock elect: campaigning for %s, although the leader could not be read: %s\n", escape.Text(name), escape.Text(s.redact(err.Error())))
	}
	rcancel()
	opts := []quorum.LockOption{quorum.WithLossWatch(),
		quorum.WithKeepAlive(quorum.KeepAlive{MaxExtensions: s.cluster.PolicyFor(name).MaxExtensions, MaxHold: a.maxHold})}
	if a.owner != "" {
		opts = append(opts, quorum.WithLockOwner(a.owner))
	}
	return holdAndRun(ctx, env, s, "elect", &a.guardArgs, dl, "the leadership of "+name, func(ctx context.Context) (*quorum.Lock, []string, error) {
		cctx, cancel := ctx, context.CancelFunc(func() {})
		switch {
		case a.wait == 0: // nobody led: one campaign, bounded by -timeout
			cctx, cancel = context.WithTimeout(ctx, a.timeout)
		case a.wait != waitForever:
			cctx, cancel = context.WithTimeout(ctx, a.wait)
		}
		defer cancel()
		lead, err := el.Campaign(cctx, a.value, ttl, opts...)
		if err != nil {
			if ctx.Err() == nil && cctx.Err() != nil {
				err = fmt.Errorf("%w: not elected after %s: %w", errWaitExpired, human.Duration(cmp.Or(a.wait, a.timeout)), err)
			}
			return nil, nil, err
		}
		l := lead.Lock
		term := strconv.FormatInt(lead.Term(), 10)
		fmt.Fprintf(env.Stderr, "redlock elect: leading %s, term %s, valid until %s\n", escape.Text(name), term, l.Until().Format(time.RFC3339Nano))
		extra := []string{"REDLOCK_TERM=" + term, "REDLOCK_VALUE=" + lead.Value()}
		if l.Fence() == 0 {
			extra = append(extra, "REDLOCK_FENCE="+term)
		}
		return l, extra, nil
	})
}
