package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/internal/connect"
	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/internal/human"
	"github.com/redlock/redlock/quorum"
	"github.com/redlock/redlock/topology"
)

// Shared pieces of the lock commands (acquire, extend, release, run, locks,
// force-expire, watch).

// silentRedisLogger silences go-redis's internal logger, which would print every dial
// failure to stderr; the commands report failures themselves, per master.
type silentRedisLogger struct{}

func (silentRedisLogger) Printf(context.Context, string, ...any) {}

var quietOnce sync.Once

func quietRedis() { quietOnce.Do(func() { redis.SetLogger(silentRedisLogger{}) }) }

// releaseTimeout bounds the clean-up release after an interruption or a child's exit.
const releaseTimeout = 5 * time.Second

// lockSession is a loaded topology and a Manager over its masters.
type lockSession struct {
	cluster     *topology.Cluster
	m           *quorum.Manager
	redact      func(string) string
	stopMetrics func()
	// noFile: the cluster is -masters' (messages say how to set what a file would).
	noFile bool
}

// adm returns the administration of the session's Manager: listings,
// force-expire, release and extension by token.
func (s *lockSession) adm() *admin.Admin { return admin.New(s.m) }

// topoFlags returns the topology flags of a command's arguments.
func (c *common) topoFlags() *common { return c }

// tokenReader is implemented by the arguments of a command that takes a lock's
// token: it is read before any master is contacted.
type tokenReader interface {
	readToken(ctx context.Context, env *Env) error
}

// withSession makes run a command's run step: it reads the token when the
// arguments take one, opens a session on the topology, runs run, and closes the
// session.
func withSession[A any, P interface {
	*A
	arguments
	topoFlags() *common
}](run func(ctx context.Context, env *Env, s *lockSession, a P) error) func(context.Context, *Env, P) error {
	return func(ctx context.Context, env *Env, a P) error {
		if t, ok := any(a).(tokenReader); ok {
			if err := t.readToken(ctx, env); err != nil {
				return err
			}
		}
		s, err := openSession(env, a.topoFlags())
		if err != nil {
			return err
		}
		defer s.close()
		return run(ctx, env, s, a)
	}
}

// openSession loads the topology named by the common flags and builds the Manager.
func openSession(env *Env, cf *common) (*lockSession, error) {
	quietRedis()
	cfg, err := cf.load(env)
	if err != nil {
		return nil, err
	}
	var opts []quorum.Option
	stopMetrics := func() {}
	if cf.metrics != nil {
		obs, stop, err := cf.metrics.start(env, cfg.Cluster)
		if err != nil {
			return nil, fail(ExitError, err)
		}
		stopMetrics = stop
		if obs != nil {
			opts = append(opts, quorum.WithObserver(obs))
		}
	}
	m, err := connect.Manager(cfg.Cluster, opts...)
	if err != nil {
		stopMetrics()
		return nil, fail(ExitInvalid, redacted(err, cfg.Redact))
	}
	return &lockSession{cluster: cfg.Cluster, m: m, redact: cfg.Redact, stopMetrics: stopMetrics, noFile: cf.masters != ""}, nil
}

func (s *lockSession) close() {
	_ = s.m.Close()
	if s.stopMetrics != nil {
		s.stopMetrics()
	}
}

// fail returns err, redacted, with exit code code.
func (s *lockSession) fail(code int, err error) error { return fail(code, redacted(err, s.redact)) }

// redactedError is an error whose message has the secrets of the topology
// (passwords, sensitive variables) taken out; errors.Is still sees the original.
type redactedError struct {
	err error
	msg string
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

func redacted(err error, redact func(string) string) error {
	if redact == nil {
		return err
	}
	return &redactedError{err: err, msg: redact(err.Error())}
}

// ttlFor returns the TTL to use for name: the -ttl flag when given (checked: not
// above max_ttl), else the lock policy's TTL.
func (s *lockSession) ttlFor(name string, ttl time.Duration, given bool) (time.Duration, error) {
	if !given {
		return s.cluster.PolicyFor(name).TTL, nil
	}
	if ttl > s.cluster.MaxTTL {
		hint := "" // where max_ttl is raised
		if s.noFile {
			hint = " (no file: raise it with " + envMaxTTL + "=D)"
		}
		return 0, usagef("-ttl %s is above the cluster's max_ttl %s%s", human.Duration(ttl), human.Duration(s.cluster.MaxTTL), hint)
	}
	return ttl, nil
}

// addSat adds two non-negative durations, saturating instead of overflowing (a
// -wait of 2562047h plus a -timeout would wrap to a deadline in the past).
func addSat(a, b time.Duration) time.Duration {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// flagGiven reports whether the flag name was set on the command line.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			given = true
		}
	})
	return given
}

// lockArgs are the arguments of a command on one lock: the common flags and NAME.
type lockArgs struct {
	common
	name string
}

// parse takes exactly one NAME ("--" ends the flags: what follows is the NAME,
// even if it starts with "-").
func (a *lockArgs) parse(p *parsed) error { return a.parseWith(p, quorum.ValidateName) }

// parseWith is parse with the name rule valid.
func (a *lockArgs) parseWith(p *parsed, valid func(string) error) error {
	pos := append(p.pos, p.rest...)
	if err := oneName(pos, valid); err != nil {
		return err
	}
	a.name = pos[0]
	return a.check()
}

// oneName checks that pos is exactly one lock NAME that valid accepts.
func oneName(pos []string, valid func(string) error) error {
	switch {
	case len(pos) == 0:
		return usagef("missing lock NAME")
	case len(pos) > 1:
		return usagef("one lock NAME expected, got %d arguments (%s)", len(pos), strings.Join(pos, " "))
	}
	if err := valid(pos[0]); err != nil {
		return usagef("lock NAME %s: %v", pos[0], err)
	}
	return nil
}

// checkTTL rejects a -ttl that was given but is not positive, not a whole number
// of milliseconds, or so short that the default drift budget (1% + 2ms) leaves no
// validity at all.
func checkTTL(p *parsed, ttl time.Duration) error {
	if !p.given("ttl") {
		return nil
	}
	switch {
	case ttl <= 0:
		return usagef("-ttl must be positive, got %s", human.Duration(ttl))
	case ttl%time.Millisecond != 0:
		return usagef("-ttl %v is not a whole number of milliseconds (the masters count in ms): try %v", ttl, ttl.Truncate(time.Millisecond))
	case ttl <= topology.DefaultDriftExtra+time.Duration(float64(ttl)*topology.DefaultDriftFactor):
		return usagef("-ttl %s leaves no validity after the drift budget (1%% + %s): give at least a few tens of milliseconds, e.g. 100ms or 30s", human.Duration(ttl), human.Duration(topology.DefaultDriftExtra))
	}
	return nil
}

// heldBy says who holds name and for how long, as far as one read tells: "held by
// alice@vm pid 42 for 1m58s more", "held by 2 shared holders (alice@vm pid 42,
// ...) for 1m58s more", and that an exclusive holder waits when one does. It
// never fails: without an answer it says "held by another owner". A revoked name
// says when it is free: "revoked, free at 15:04:05 (in 12s)".
func (s *lockSession) heldBy(ctx context.Context, name string, timeout time.Duration) string {
	cctx, cancel := context.WithTimeout(ctx, min(timeout, 2*time.Second))
	defer cancel()
	lst, _ := s.adm().Describe(cctx, []string{name, admin.WriterWaitingName(name)})
	if lst == nil || lst.Lock(name) == nil {
		return "held by another owner"
	}
	li := lst.Lock(name)
	if li.State == admin.StateRevoked {
		return revokedText(li)
	}
	out := "held by " + holderRaw(li)
	validity, waits := li.Validity, false
	if admin.Class(li).Kind == admin.KeyShared {
		prims, _ := s.adm().Primitives(cctx, lst)
		for i := range prims {
			if p := &prims[i]; p.Kind == admin.KindShared {
				out, validity = "held by "+sharedHoldersText(p), 0
				for _, h := range p.Holders {
					validity = max(validity, h.Validity)
				}
				waits = p.ExclusiveWaiting
			}
		}
	}
	switch {
	case validity == admin.NoExpiry:
		out += " with no TTL"
	case validity > 0:
		out += " for " + human.Duration(validity) + " more"
	}
	if waits {
		out += "; an exclusive holder waits for them, so no new shared holder gets in"
	}
	return out
}

// sharedHoldersText says who the shared holders of p are: "2 shared holders
// (alice@vm pid 42, bob@vm pid 7)", at most three named.
func sharedHoldersText(p *admin.Primitive) string {
	var who []string
	for _, h := range p.Holders {
		if len(who) == 3 {
			who = append(who, "...")
			break
		}
		if h.Owner != nil {
			who = append(who, holderRaw(&admin.LockInfo{Owner: h.Owner}))
		} else {
			who = append(who, admin.Redact(h.Value))
		}
	}
	n := len(p.Holders)
	word := "shared holders"
	if n == 1 {
		word = "shared holder"
	}
	if n == 0 {
		return "shared holders whose members could not be read"
	}
	return fmt.Sprintf("%d %s (%s)", n, word, strings.Join(who, "; "))
}

// ms converts a duration to the JSON unit: milliseconds, as a decimal number
// with microsecond precision (latencies are often below a millisecond).
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// masterResult is one master's answer to a lock command, for JSON and text.
type masterResult struct {
	Master    string  `json:"master"`
	Outcome   string  `json:"outcome"`
	Error     string  `json:"error,omitempty"`
	LatencyMS float64 `json:"latency_ms"`
}

// reportJSON is a round's report for -json output.
type reportJSON struct {
	Votes   int            `json:"votes"`
	Quorum  int            `json:"quorum"`
	Total   int            `json:"total"`
	Masters []masterResult `json:"masters"`
}

func (s *lockSession) report(rep *quorum.Report) *reportJSON {
	if rep == nil {
		return nil
	}
	out := &reportJSON{Votes: rep.Votes, Quorum: rep.Quorum, Total: len(rep.Nodes)}
	for _, n := range rep.Nodes {
		r := masterResult{Master: n.Node, Outcome: n.Outcome.String(), LatencyMS: ms(n.Latency)}
		if n.Err != nil {
			r.Error = s.redact(n.Err.Error())
		}
		out.Masters = append(out.Masters, r)
	}
	return out
}

// reportOf extracts the round report from an error, when it carries one.
func reportOf(err error) *quorum.Report {
	var re *quorum.RoundError
	if errors.As(err, &re) {
		return &re.Report
	}
	return nil
}

// summary says "3 of 5 masters".
func (r *reportJSON) summary() string {
	if r == nil {
		return "no votes"
	}
	return fmt.Sprintf("%d of %d masters", r.Votes, r.Total)
}

// printReport writes one line per master: name, outcome and error.
func printReport(w io.Writer, rep *quorum.Report, label map[quorum.Outcome]string, redact func(string) string) {
	if rep == nil {
		return
	}
	for _, n := range rep.Nodes {
		word := label[n.Outcome]
		if word == "" {
			word = n.Outcome.String()
		}
		line := fmt.Sprintf("  %-12s %s", escape.Line(n.Node, 30), word)
		if n.Err != nil {
			line += ": " + escape.Text(redactWith(redact, n.Err.Error()))
		}
		fmt.Fprintln(w, line)
	}
}

// errWaitExpired: -wait ran out before the lock could be taken.
var errWaitExpired = errors.New("wait expired")

// waitAcquire takes the lock: one round when wait is 0, else rounds until wait has
// passed. The error of a failed acquisition matches quorum.ErrNotAcquired; a wait
// that ran out also matches errWaitExpired; an interruption matches
// context.Canceled. Whatever a failed or interrupted attempt set is released.
func waitAcquire(ctx context.Context, m *quorum.Manager, name string, ttl, wait time.Duration, opts ...quorum.LockOption) (*quorum.Lock, error) {
	l, err := acquireRounds(ctx, m, name, ttl, wait, opts)
	return releaseIfInterrupted(ctx, l, waitExpired(ctx, err, wait))
}

// waitExpired marks err, the error of an acquisition that waited up to wait, as
// errWaitExpired when the wait ran out (not the caller's context).
func waitExpired(ctx context.Context, err error, wait time.Duration) error {
	if err != nil && wait > 0 && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, errWaitExpired) {
		return fmt.Errorf("%w after %s: %w", errWaitExpired, human.Duration(wait), err)
	}
	return err
}

// releaseIfInterrupted releases l when ctx ended as its round succeeded, and
// returns the error of an interrupted acquisition instead.
func releaseIfInterrupted(ctx context.Context, l *quorum.Lock, err error) (*quorum.Lock, error) {
	if err == nil && ctx.Err() != nil {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
		defer cancel()
		_ = l.Release(rctx)
		return nil, fmt.Errorf("%w: %w", quorum.ErrNotAcquired, context.Cause(ctx))
	}
	return l, err
}

// acquireRounds makes one round when wait is 0, else one Acquire for the whole
// wait: a fair waiter keeps its place in the queue.
func acquireRounds(ctx context.Context, m *quorum.Manager, name string, ttl, wait time.Duration, opts []quorum.LockOption) (*quorum.Lock, error) {
	if wait <= 0 {
		return m.TryAcquire(ctx, name, ttl, opts...)
	}
	return m.Acquire(ctx, name, ttl, append(opts, quorum.WithWait(wait))...)
}

// acquireExit maps an acquisition error to an exit code: 3 when held by another or
// the wait ran out while it was, 1 otherwise (masters unavailable, interrupted).
func acquireExit(ctx context.Context, err error) int {
	var re *quorum.RoundError
	var ue *usageError
	switch {
	case ctx.Err() != nil:
		return ExitError
	case errors.As(err, &ue):
		return ExitInvalid
	case errors.Is(err, quorum.ErrHeld):
		return ExitNotHeld
	case errors.Is(err, errWaitExpired) && !(errors.As(err, &re) && errors.Is(re.Kind, quorum.ErrUnavailable)):
		return ExitNotHeld
	}
	return ExitError
}

// policyOptions returns the lock options that the lock policy of name asks for
// (fencing, fair queueing) plus an owner label when one is given.
func (s *lockSession) policyOptions(name, owner string) []quorum.LockOption {
	p := s.cluster.PolicyFor(name)
	var opts []quorum.LockOption
	if p.Fencing {
		opts = append(opts, quorum.WithFencing())
	}
	if p.Fair {
		opts = append(opts, quorum.WithFair())
	}
	if owner != "" {
		opts = append(opts, quorum.WithLockOwner(owner))
	}
	return opts
}

// escapeLines escapes every line of a human text (server answers and errors are
// hostile strings) and keeps its line breaks.
func escapeLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = escape.Text(l)
	}
	return strings.Join(lines, "\n")
}
