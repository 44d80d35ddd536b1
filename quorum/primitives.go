package quorum

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redlock/redlock/internal/keyspace"
	"github.com/redlock/redlock/internal/wire"
)

// Coordination primitives beyond the mutex: semaphores (Manager.Semaphore), multi-name
// locks (Manager.Multi), shared holds (Manager.Shared) and leader election (Election).
// Each is built from Redlock rounds on the same masters, with the same validity
// arithmetic (counted from before the first send, minus the drift budget), the same
// restart quarantine, the same lost signal (Lock.Done no later than Lock.Until) and
// the same keep-alive. SAFETY.md has the bound of each and what is not guaranteed.
//
// Key layout. Every key starts with the key prefix (default "lock:"); NAME is the
// name the caller gave. What a key is can be told from its name and its Redis type
// alone (keyspace.ClassifyKey, admin.ClassifyKey), which is what listings use:
//
//	key                            type    written by                      what
//	NAME                           string  Acquire, Multi(...).Acquire     a plain lock, or one name of a multi-name
//	                                                                       hold (every name of it holds the same value)
//	NAME                           zset    Shared(NAME).Acquire            shared holders: member = holder's value,
//	                                                                       score = its expiry (server ms); key TTL =
//	                                                                       the latest expiry
//	NAME:xwait                     string  Acquire (exclusive) waiting     an exclusive waiter that met shared holders:
//	                               (PX)    behind shared holders           new shared grants are refused while it lives
//	NAME:permit:I                  string  Semaphore(NAME, N).Acquire      permit slot I (0 <= I < N) of semaphore NAME:
//	                                                                       a Redlock mutex; its value's owner part
//	                                                                       carries N ("n") and the kind ("k":"sem")
//	NAME:permit:I:fence            string  Semaphore + WithFencing         the fence counter of permit slot I
//	NAME:permit:queue              zset    Semaphore + WithFair            the FIFO queue of the semaphore's waiters
//	NAME:leader                    string  Election.Campaign               the leadership: a Redlock mutex
//	NAME:leader:fence              string  Election.Campaign               the term counter (no TTL)
//	NAME:leader:term               hash    Election.Campaign               the leader's record: token, term, since
//	                                                                       (unix ms), value; valid only on a master
//	                                                                       where token equals NAME:leader's value
//	                                                                       (no TTL: one per election name)
//	NAME:fence                     string  WithFencing                     a plain lock's fence counter (no TTL)
//	NAME:queue                     zset    WithFair                        a plain lock's FIFO queue
//	                                       Acquire waiting                 and the markers of its waiters that are not
//	                                                                       queued (waitmark.go)
//	"NAME waiting:queue"           string  Acquire waiting                 the waiting flag: lives while a marker or a
//	                               (PX)                                    place in NAME:queue does; a release deletes
//	                                                                       it with NAME, and wakes the waiters only
//	                                                                       where it was there (release.lua)
//
// ValidateName refuses names ending with ":fence", ":queue", ":xwait", ":leader",
// ":term", ":permit" or ":permit:" followed by digits, so no name given by a user
// ever collides with one of these keys. A name is meant to be used as one
// primitive: a semaphore NAME and a plain lock NAME are different keys and the
// rounds do not exclude each other (admin.Admin.ReadHeldAs lets a caller refuse the mix, as
// the CLI does); a shared hold and a plain lock of NAME are the same key and do.

// Key suffixes of the primitives (see the key layout above).
const (
	permitInfix  = keyspace.PermitInfix
	permitBase   = keyspace.PermitBase
	xwaitSuffix  = keyspace.XwaitSuffix
	leaderSuffix = keyspace.LeaderSuffix
	termSuffix   = keyspace.TermSuffix
)

// Errors of the primitives.
var (
	// ErrNoLeader: no candidate holds the election's leadership on a quorum of
	// masters.
	ErrNoLeader = errors.New("no leader")
)

// MaxPermits bounds a semaphore's permit count: every acquisition round tries
// the slots in one script, and a listing reads them all.
const MaxPermits = 1024

// reservedName reports the reserved ending of a name, "" when it has none.
func reservedName(name string) string {
	for _, s := range []string{xwaitSuffix, leaderSuffix, termSuffix, permitBase} {
		if strings.HasSuffix(name, s) {
			return s
		}
	}
	if _, _, ok := keyspace.CutPermit(name); ok {
		return permitInfix + "<digits>"
	}
	return ""
}

// primitive is what a Lock of a primitive does differently from a plain lock:
// its extension and release rounds. nil for a plain lock.
type primitive interface {
	extend(ctx context.Context, l *Lock, ttl time.Duration) (time.Time, *Report, error)
	release(ctx context.Context, l *Lock) *Report
}

// extendRound runs one extension round of l on the masters.
func (l *Lock) extendRound(ctx context.Context, ttl time.Duration) (time.Time, *Report, error) {
	if l.prim != nil {
		return l.prim.extend(ctx, l, ttl)
	}
	return l.m.extend(ctx, l.key, l.value, ttl)
}

// releaseRound runs the release round of l on the masters.
func (l *Lock) releaseRound(ctx context.Context) *Report {
	if l.prim != nil {
		return l.prim.release(ctx, l)
	}
	return l.m.release(ctx, opRelease, l.key, l.value)
}

// acquirer is how a primitive takes its keys: the acquisition loop (acquire.go)
// runs its rounds instead of a plain lock's SET NX round.
type acquirer interface {
	// waitKey is the key whose wake-up channel (and fair queue) waiters use.
	waitKey() string
	// describe marks the owner part of the values the rounds write.
	describe(o *Owner)
	// round is one acquisition round that started at start (the clock's reading
	// before the first send); on failure it has released what it set.
	round(ctx context.Context, start time.Time, value string, ttl time.Duration, fw *fairWaiter) (*Lock, error)
	// won runs after a successful round (and fencing): on failure it has released
	// the lock and returns an error matching ErrNotAcquired.
	won(ctx context.Context, l *Lock) error
}

// acquirerFor checks the primitive options of lc and returns the acquirer of the
// acquisition, nil for a plain lock (whose name it checks).
func (m *Manager) acquirerFor(name string, lc *lockConfig) (acquirer, error) {
	if lc.override != nil {
		return lc.override(m, name, lc)
	}
	kinds := 0
	for _, on := range []bool{lc.semaphore, lc.shared, lc.multi != nil} {
		if on {
			kinds++
		}
	}
	if kinds > 1 {
		return nil, fmt.Errorf("%w: permits, shared holds and several names do not go together", ErrInvalidArgument)
	}
	switch {
	case lc.semaphore:
		return m.newPermitAcquirer(name, lc)
	case lc.shared:
		return m.newSharedAcquirer(name, lc)
	case lc.multi != nil:
		return m.newMultiAcquirer(lc)
	}
	return nil, checkName(name)
}

// scriptOnAll runs script on every master as one round of the pipelined wire
// path (scriptEach) and counts its integer replies: r maps to outcomeOf(r) (1
// ours, 0 missing, else foreign) unless out is given (i is the master's index in
// declared order; an error it returns makes the outcome OutcomeError).
func (m *Manager) scriptOnAll(ctx context.Context, op, key string, script *wire.Script, keys []string, out func(i int, r int64) (Outcome, error), args ...string) *Report {
	return m.scriptEach(ctx, op, key, script, ":", nil, keys, func(i int, r *wire.Result) (Outcome, error) {
		if out != nil {
			return out(i, r.Int)
		}
		return outcomeOf(r.Int), nil
	}, args...)
}

// scriptEach runs script over keys and args as one round of the pipelined wire
// path (hot.go) on the masters only marks (one element per master; every master
// when nil): EVALSHA, EVAL after NOSCRIPT, each master's command within the node
// timeout (or ctx's deadline when sooner), a cancellation of ctx ending the round
// at once. A reply of a type in want ('*' an array, ':' an integer...) goes to
// decode (i is the master's index in declared order; an error it returns makes
// the outcome OutcomeError), and so does an error reply when want has '-' (its
// Err an ErrorReply); no reply, an error reply otherwise (WRONGTYPE matches
// ErrWrongType) and a reply of another type (the connection is dropped) are
// OutcomeError. The report has the asked masters only, in declared order. keys
// and args are not referenced once it has returned; nor is a reply's text, unless
// decode keeps it. The round is observed.
func (m *Manager) scriptEach(ctx context.Context, op, key string, script *wire.Script, want string, only []bool, keys []string, decode func(i int, r *wire.Result) (Outcome, error), args ...string) *Report {
	rep := m.roundEach(ctx, m.tr, op, key, script, want, only, keys, decode, args...)
	m.observeRound(rep)
	return rep
}

// roundEach is scriptEach on the transport tr, without observing the round.
func (m *Manager) roundEach(ctx context.Context, tr wire.Rounder, op, key string, script *wire.Script, want string, only []bool, keys []string, decode func(i int, r *wire.Result) (Outcome, error), args ...string) *Report {
	c := m.getCall()
	c.cmd = wire.Cmd{Script: script, Keys: keys, Args: args, Want: want, Only: only}
	if len(args) <= len(c.args) {
		c.cmd.Args = c.args[:copy(c.args[:], args)]
	}
	tr.Round(ctx, &c.cmd, c.res)
	asked := len(m.nodes)
	if only != nil {
		asked = 0
		for _, yes := range only {
			if yes {
				asked++
			}
		}
	}
	rep := &Report{Op: op, Key: key, Quorum: m.quorum, Nodes: make([]NodeResult, 0, asked)}
	for i, n := range m.nodes {
		if only != nil && !only[i] {
			continue
		}
		r := &c.res[i]
		nr := NodeResult{Node: n.name, Outcome: OutcomeError, Latency: r.Latency}
		err := replyFailure(r, want)
		if err == nil {
			nr.Outcome, err = decode(i, r)
		}
		if err != nil {
			nr.Outcome, nr.Err = OutcomeError, n.explain(err)
		}
		rep.Nodes = append(rep.Nodes, nr)
	}
	m.putCall(c)
	rep.Votes = rep.count(OutcomeOK)
	return rep
}

// bestEffort sends the command args to the masters only marks (every master
// when nil) as one round of the transport, in the background, each master's
// command within the node timeout, and drops the replies: for clean-ups that
// something else undoes when they fail (a heartbeat's or a key's TTL). It is
// not observed as a round.
func (m *Manager) bestEffort(ctx context.Context, only []bool, args ...string) {
	m.bestEffortAfter(ctx, nil, only, args...)
}

// bestEffortAfter is bestEffort once what after counts has ended (nil: at once).
func (m *Manager) bestEffortAfter(ctx context.Context, after *sync.WaitGroup, only []bool, args ...string) {
	m.background(func() {
		if after != nil {
			after.Wait()
		}
		out := make([]wire.Result, len(m.nodes))
		m.tr.Round(ctx, &wire.Cmd{Args: args, Want: ":", Only: only}, out)
	})
}

// replyFailure is the error of a master's result r for a command that takes the
// reply types in want: no reply (noReply), a reply of a type not in want
// (replyErr: an error reply too, unless want has '-'); nil when r is a reply to
// decode.
func replyFailure(r *wire.Result, want string) error {
	switch {
	case r.Type == 0:
		return noReply(r)
	case strings.IndexByte(want, r.Type) < 0:
		return replyErr(r)
	}
	return nil
}

// noReply is the error of a master that gave no reply to a round's command.
func noReply(r *wire.Result) error {
	switch {
	case r.Err == nil:
		return wire.ErrNoReply
	case errors.Is(r.Err, wire.ErrClosed):
		return errManagerClosed
	}
	return r.Err
}

// msArg is a duration in whole milliseconds, as a script's argument.
func msArg(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

// nodeIndex returns n's position in declared order.
func (m *Manager) nodeIndex(n *node) int { return slices.Index(m.nodes, n) }

// scoredExtend finishes an extension round that started at start, as extend does.
func (m *Manager) scoredExtend(rep *Report, start time.Time, ttl time.Duration) (time.Time, *Report, error) {
	if until, ok := m.score(rep, start, ttl); ok {
		return until, rep, nil
	}
	return time.Time{}, rep, m.roundError(rep)
}

// released counts a release-like script's reply: keys deleted (> 0) is ours.
func released(_ int, r int64) (Outcome, error) {
	if r > 0 {
		return OutcomeOK, nil
	}
	return OutcomeMissing, nil
}

// granted counts an acquisition script's reply: 1 granted, anything else held.
func granted(_ int, r int64) (Outcome, error) {
	if r == 1 {
		return OutcomeOK, nil
	}
	return OutcomeForeign, nil
}
