package quorum

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Reserved suffixes: keys the package keeps beside a lock (fence counter, fair queue).
// Lock names may not end with them.
var reservedSuffixes = []string{":fence", ":queue"}

// LockOption configures one acquisition.
type LockOption func(*lockConfig)

type lockConfig struct {
	owner     string
	keepAlive *KeepAlive
	fencing   bool
	fair      bool
}

// WithLockOwner overrides the Manager's owner label for one lock.
func WithLockOwner(label string) LockOption { return func(c *lockConfig) { c.owner = label } }

// KeepAlive configures the background extension of a lock. The keep-alive extends
// the lock by its TTL every Fraction of the TTL, never past MaxExtensions extensions
// or MaxHold after acquisition, and stops on Release. When it cannot extend before
// the validity ends, or is stopped by a cap, the lock's Context is cancelled with a
// cause matching ErrLost at the end of the validity.
type KeepAlive struct {
	// Fraction of the TTL after which to extend; 0 means DefaultKeepAliveFraction.
	Fraction float64
	// MaxExtensions caps the number of extensions; 0 means no cap.
	MaxExtensions int
	// MaxHold caps the total time the lock is held from acquisition; 0 means no cap.
	MaxHold time.Duration
}

// WithKeepAlive starts a keep-alive for the acquired lock.
func WithKeepAlive(k KeepAlive) LockOption {
	return func(c *lockConfig) { c.keepAlive = &k }
}

// Lock is a lock held on a quorum of masters until Until. It is safe for concurrent
// use. Holding a Lock guarantees mutual exclusion only until Until, and only under
// the Manager's assumptions; watch Done (or Context) to learn that it was lost.
type Lock struct {
	m     *Manager
	name  string
	key   string
	value string
	ttl   time.Duration
	fence int64
	votes Report
	start time.Time // acquisition round start

	ctx    context.Context
	cancel context.CancelCauseFunc

	mu       sync.Mutex // serialises Extend and Release
	until    time.Time  // guarded by mu
	released bool       // guarded by mu
	expiry   *time.Timer
	kaStop   chan struct{}
	kaDone   chan struct{}
}

// checkName rejects names that cannot be locks.
func checkName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty", ErrInvalidName)
	}
	for _, s := range reservedSuffixes {
		if strings.HasSuffix(name, s) {
			return fmt.Errorf("%w: %q ends with the reserved suffix %q", ErrInvalidName, name, s)
		}
	}
	return nil
}

// checkTTL validates a TTL before any I/O: positive, whole milliseconds at least 1ms,
// and not above the maximum.
func (m *Manager) checkTTL(ttl time.Duration) error {
	if ttl < time.Millisecond {
		return fmt.Errorf("%w: %v must be at least 1ms", ErrInvalidTTL, ttl)
	}
	if ttl > m.cfg.maxTTL {
		return fmt.Errorf("%w: %v above the maximum %v", ErrInvalidTTL, ttl, m.cfg.maxTTL)
	}
	return nil
}

// TryAcquire makes one round: SET NX PX on every master in parallel. It returns the
// lock when a quorum voted and validity is left; otherwise it releases whatever the
// round set, on every master, and returns a *RoundError matching ErrNotAcquired.
func (m *Manager) TryAcquire(ctx context.Context, name string, ttl time.Duration, opts ...LockOption) (*Lock, error) {
	return m.acquire(ctx, name, ttl, 1, opts)
}

// Acquire tries up to the retry policy's number of rounds, sleeping a random delay
// between them, until it takes the lock or ctx ends. A release of the name by anyone
// using this package wakes the waiter at once (pub/sub, one subscription per Manager),
// and a round that follows a wake-up does not use an attempt: a lock that keeps
// changing hands is waited for until ctx ends. With WithFair, waiters take the lock
// in the order they asked for it. A cancelled ctx gives an error
// matching both ErrNotAcquired and ctx.Err(); nothing is left set on any master.
func (m *Manager) Acquire(ctx context.Context, name string, ttl time.Duration, opts ...LockOption) (*Lock, error) {
	return m.acquire(ctx, name, ttl, m.cfg.attempts, opts)
}

func (m *Manager) acquire(ctx context.Context, name string, ttl time.Duration, attempts int, opts []LockOption) (*Lock, error) {
	// The first round's validity counts from the call itself, so that Until is never
	// later than call start + ttl - drift; later rounds count from their own start.
	start := m.cfg.clock.Now()
	if err := checkName(name); err != nil {
		return nil, err
	}
	if err := m.checkTTL(ttl); err != nil {
		return nil, err
	}
	lc := lockConfig{owner: m.cfg.owner}
	for _, o := range opts {
		o(&lc)
	}
	owner := m.owner
	owner.Label = lc.owner
	owner.At = time.Now()
	value, err := newValue(owner)
	if err != nil {
		return nil, err
	}
	key := m.Key(name)
	var fw *fairWaiter
	if lc.fair {
		if fw, err = m.newFairWaiter(attempts == 1); err != nil {
			return nil, err
		}
	}
	var (
		last   error
		w      *waiter
		unreg  func()
		woken  bool // the next round follows a wake-up: it does not use an attempt
		rounds int
	)
	defer func() {
		if unreg != nil {
			unreg()
		}
	}()
	if attempts > 1 {
		if h := m.runningHub(); h != nil {
			w, unreg = h.registerIfSubscribed(key)
		}
	}
	for tries := 0; ; rounds++ {
		if err := ctx.Err(); err != nil {
			return nil, m.giveUp(ctx, key, fw, m.cancelled(key, last, ctx))
		}
		if rounds > 0 {
			start = m.cfg.clock.Now()
		}
		roundStart := time.Now()
		l, err := m.round(ctx, start, name, key, value, ttl, fw)
		if err == nil && lc.fencing {
			err = m.raiseFence(ctx, l)
		}
		if err == nil {
			l.start0(lc)
			return l, nil
		}
		if ctx.Err() != nil {
			// The context ended during this round, so its failures say nothing
			// about the lock: report the last round that ran to its end, if any.
			if last == nil {
				last = err
			}
			return nil, m.giveUp(ctx, key, fw, m.cancelled(key, last, ctx))
		}
		last = err
		if !woken {
			tries++
		}
		if tries >= attempts {
			return nil, m.giveUp(ctx, key, fw, last)
		}
		if w == nil {
			if h := m.hub(); h != nil {
				w, unreg = h.register(key)
				// A release between the failed round and the subscription would go
				// unnoticed: once subscribed, try again at once.
				if woken, err = m.subscribed(ctx, w); err != nil {
					return nil, m.giveUp(ctx, key, fw, m.cancelled(key, last, ctx))
				}
				if woken {
					continue
				}
			}
		}
		delay := m.retryDelay()
		if fw == nil {
			delay = splitVoteDelay(last, delay)
		}
		if woken, err = m.await(ctx, w, roundStart, delay); err != nil {
			return nil, m.giveUp(ctx, key, fw, m.cancelled(key, last, ctx))
		}
	}
}

// splitVoteDelay shortens the retry delay after a split vote: the round won some
// masters but not a quorum, so the lock was free there and the contenders (woken
// together by a release) collided. Nobody will publish a release for a lock that no
// one holds, so instead of sleeping the whole delay, retry after a short random
// pause of up to twice the round's duration (at least a millisecond).
func splitVoteDelay(last error, delay time.Duration) time.Duration {
	var re *RoundError
	if !errors.As(last, &re) || re.Report.Votes == 0 || !errors.Is(re.Kind, ErrHeld) {
		return delay
	}
	span := max(2*re.Report.Elapsed, time.Millisecond)
	return min(time.Duration(rand.Int64N(int64(span))+1), delay)
}

// giveUp ends a failed acquisition: a fair waiter leaves the queue on every master.
func (m *Manager) giveUp(ctx context.Context, key string, fw *fairWaiter, err error) error {
	if fw != nil {
		m.leave(backgroundFor(ctx), key, fw)
	}
	return err
}

// subscribed waits, at most one node timeout, until w's subscription is confirmed.
// fresh tells whether it had to wait (and so a release may have been missed).
func (m *Manager) subscribed(ctx context.Context, w *waiter) (fresh bool, err error) {
	select {
	case <-w.ready:
		return false, nil
	default:
	}
	t := time.NewTimer(m.cfg.nodeTimeout)
	defer t.Stop()
	select {
	case <-w.ready:
		return true, nil
	case <-t.C:
		return false, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// await sleeps d, or less when w gets a wake-up that arrived after since (the start
// of the round that just failed). woken tells which.
func (m *Manager) await(ctx context.Context, w *waiter, since time.Time, d time.Duration) (woken bool, err error) {
	if w == nil {
		return false, m.sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			return false, nil
		case <-ctx.Done():
			return false, ctx.Err()
		case <-w.ch:
			if w.wokenAfter(since) {
				return true, nil
			}
		}
	}
}

// cancelled builds the error for an acquisition ended by ctx, keeping the last
// round's report when there was one.
func (m *Manager) cancelled(key string, last error, ctx context.Context) error {
	var re *RoundError
	if errors.As(last, &re) {
		cp := *re
		cp.Cause = context.Cause(ctx)
		return &cp
	}
	return &RoundError{Report: Report{Op: opAcquire, Key: key, Quorum: m.quorum}, Kind: ErrUnavailable, Cause: context.Cause(ctx)}
}

func (m *Manager) retryDelay() time.Duration {
	lo := m.cfg.delay - m.cfg.jitter
	return lo + time.Duration(rand.Int64N(int64(2*m.cfg.jitter)+1))
}

func (m *Manager) sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// round is one acquisition round: SET NX PX on every master, or the fair queue's
// script when fw is set.
func (m *Manager) round(ctx context.Context, start time.Time, name, key, value string, ttl time.Duration, fw *fairWaiter) (*Lock, error) {
	ms := ttl.Milliseconds()
	var rep *Report
	switch {
	case fw != nil:
		rep = m.fanout(ctx, opAcquire, key, fw.setter(key, value, ttl))
	case m.fast():
		rep = m.wireRound(ctx, opAcquire, key, wireSet, value, "", ms)
	default:
		rep = m.fanout(ctx, opAcquire, key, func(ctx context.Context, n *node) (Outcome, error) {
			err := n.client.Do(ctx, "SET", key, value, "NX", "PX", ms).Err()
			switch {
			case errors.Is(err, redis.Nil):
				return OutcomeForeign, nil
			case err != nil:
				return OutcomeError, err
			}
			return OutcomeOK, nil
		})
	}
	if until, ok := m.score(rep, start, ttl); ok {
		l := &Lock{m: m, name: name, key: key, value: value, ttl: ttl, votes: *rep, start: start, until: until}
		m.leaveStragglers(backgroundFor(ctx), key, fw, rep)
		return l, nil
	}
	switch {
	case m.cfg.mut.noReleaseOnFail:
	case fw != nil:
		m.unwind(backgroundFor(ctx), key, value, fw)
	default:
		m.releaseVia(backgroundFor(ctx), opRelease, key, value, "")
	}
	return nil, m.roundError(rep)
}

// unquarantinedVotes turns the votes of quarantined masters into OutcomeQuarantined.
func (m *Manager) unquarantinedVotes(rep *Report, now time.Time) {
	if m.cfg.quarantine <= 0 {
		return
	}
	for i, n := range m.nodes {
		if rep.Nodes[i].Outcome != OutcomeOK {
			continue
		}
		if until := n.quarantinedUntil(now); !until.IsZero() {
			rep.Nodes[i].Outcome = OutcomeQuarantined
			rep.Nodes[i].Err = fmt.Errorf("%w until %s", ErrQuarantined, until.Format(time.RFC3339))
		}
	}
	rep.Votes = rep.count(OutcomeOK)
}

// roundError classifies a failed round.
func (m *Manager) roundError(rep *Report) *RoundError {
	down := rep.count(OutcomeError) + rep.count(OutcomeQuarantined)
	var kind error
	switch {
	case rep.Votes >= m.quorum:
		kind = ErrTooSlow
	case len(m.nodes)-down < m.quorum:
		kind = ErrUnavailable
	case rep.Op != opAcquire && rep.count(OutcomeForeign)+rep.count(OutcomeMissing) > len(m.nodes)-m.quorum:
		kind = ErrLost
	case rep.Op != opAcquire:
		kind = ErrUnavailable
	default:
		kind = ErrHeld
	}
	return &RoundError{Report: *rep, Kind: kind}
}

// release runs compare-and-delete of value on every master and wakes the name's
// waiters where it deleted the key.
func (m *Manager) release(ctx context.Context, op, key, value string) *Report {
	return m.releaseVia(ctx, op, key, value, wakeChannel(key))
}

// releaseVia is release with the wake-up channel given: "" wakes nobody (the clean-up
// of a failed round frees no lock that anyone could take, and waking the other
// waiters from it would let failed rounds wake each other in a loop).
func (m *Manager) releaseVia(ctx context.Context, op, key, value, channel string) *Report {
	if m.fast() && !m.cfg.mut.plainDelRelease {
		return m.wireRound(ctx, op, key, wireRelease, value, channel, 0)
	}
	return m.fanout(ctx, op, key, func(ctx context.Context, n *node) (Outcome, error) {
		if m.cfg.mut.plainDelRelease {
			return OutcomeOK, n.client.Del(ctx, key).Err()
		}
		r, err := releaseScript.Run(ctx, n.client, []string{key}, value, channel).Int64()
		if err != nil {
			return OutcomeError, err
		}
		return outcomeOf(r), nil
	})
}

// ReleaseToken releases the lock name held with token (a full lock value, as
// Lock.Token returns) on every master: compare-and-delete, so another owner's key is
// never touched. Missing keys are not an error. It returns the per-master report and
// an error naming the masters that failed, if any did.
func (m *Manager) ReleaseToken(ctx context.Context, name, token string) (*Report, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	rep := m.release(ctx, opRelease, m.Key(name), token)
	return rep, partialError(rep)
}

// partialError returns an error when some master failed a release-like round.
func partialError(rep *Report) error {
	if rep.count(OutcomeError) == 0 {
		return nil
	}
	return &RoundError{Report: *rep, Kind: ErrUnavailable}
}

// ForceExpire deletes the lock name on every master. With a non-empty token it
// deletes only where the value still equals token (compare-and-delete); with an
// empty token it deletes whatever is there. It is an administrative action: it
// breaks the mutual exclusion of whoever holds the lock.
func (m *Manager) ForceExpire(ctx context.Context, name, token string) (*Report, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	key := m.Key(name)
	if token != "" {
		rep := m.release(ctx, opForceExpire, key, token)
		return rep, partialError(rep)
	}
	rep := m.fanout(ctx, opForceExpire, key, func(ctx context.Context, n *node) (Outcome, error) {
		d, err := n.client.Del(ctx, key).Result()
		if err != nil {
			return OutcomeError, err
		}
		if d == 0 {
			return OutcomeMissing, nil
		}
		return OutcomeOK, nil
	})
	return rep, partialError(rep)
}

// ExtendToken extends the lock name held with token to ttl on every master where
// the value still matches; it never recreates a missing key. It succeeds when a
// quorum extended and validity is left, returning the new deadline; otherwise the
// error matches ErrLost (a majority no longer holds token) or ErrUnavailable.
func (m *Manager) ExtendToken(ctx context.Context, name, token string, ttl time.Duration) (time.Time, *Report, error) {
	if err := checkName(name); err != nil {
		return time.Time{}, nil, err
	}
	if !m.cfg.mut.unvalidatedExtendTTL {
		if err := m.checkTTL(ttl); err != nil {
			return time.Time{}, nil, err
		}
	}
	return m.extend(ctx, m.Key(name), token, ttl)
}

func (m *Manager) extend(ctx context.Context, key, value string, ttl time.Duration) (time.Time, *Report, error) {
	start := m.cfg.clock.Now()
	ms := ttl.Milliseconds()
	var rep *Report
	if m.fast() && !m.cfg.mut.extendRecreates {
		rep = m.wireRound(ctx, opExtend, key, wireExtend, value, "", ms)
	} else {
		rep = m.fanout(ctx, opExtend, key, func(ctx context.Context, n *node) (Outcome, error) {
			if m.cfg.mut.extendRecreates {
				if err := n.client.Do(ctx, "SET", key, value, "PX", ms).Err(); err != nil {
					return OutcomeError, err
				}
				return OutcomeOK, nil
			}
			r, err := extendScript.Run(ctx, n.client, []string{key}, value, ms).Int64()
			if err != nil {
				return OutcomeError, err
			}
			return outcomeOf(r), nil
		})
	}
	if until, ok := m.score(rep, start, ttl); ok {
		return until, rep, nil
	}
	return time.Time{}, rep, m.roundError(rep)
}

// score finishes a round that started at start: it drops the votes of quarantined
// masters, fills Elapsed and Validity (ttl - elapsed - drift) and reports the new
// deadline, start + ttl - drift, when a quorum voted and validity is left.
func (m *Manager) score(rep *Report, start time.Time, ttl time.Duration) (until time.Time, ok bool) {
	now := m.cfg.clock.Now()
	m.unquarantinedVotes(rep, now)
	if m.cfg.mut.validityFromReply {
		start = now
	}
	rep.Elapsed = now.Sub(start)
	drift := m.cfg.drift(ttl)
	rep.Validity = ttl - rep.Elapsed - drift
	if rep.Votes >= m.quorum && rep.Validity > 0 {
		return start.Add(ttl - drift), true
	}
	return time.Time{}, false
}

// start0 finishes a fresh lock: its context, its expiry timer and its keep-alive.
func (l *Lock) start0(lc lockConfig) {
	l.ctx, l.cancel = context.WithCancelCause(context.Background())
	l.expiry = time.AfterFunc(l.until.Sub(l.m.cfg.clock.Now()), l.expire)
	if lc.keepAlive != nil {
		l.kaStop = make(chan struct{})
		l.kaDone = make(chan struct{})
		go l.keepAlive(*lc.keepAlive)
	}
}

// expire cancels the lock's context when its validity has run out without extension.
func (l *Lock) expire() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return
	}
	if d := l.until.Sub(l.m.cfg.clock.Now()); d > 0 { // extended meanwhile
		l.expiry.Reset(d)
		return
	}
	l.cancel(fmt.Errorf("%w: validity of %s ended", ErrLost, l.name))
}

// Name returns the lock name.
func (l *Lock) Name() string { return l.name }

// Key returns the Redis key (key prefix plus name).
func (l *Lock) Key() string { return l.key }

// Token returns the full lock value "rl1.<token>.<owner>", which ReleaseToken,
// ExtendToken and ForceExpire compare. It is a secret of the holder.
func (l *Lock) Token() string { return l.value }

// Fence returns the fencing number of this acquisition, 0 when fencing is off.
func (l *Lock) Fence() int64 { return l.fence }

// Votes returns the report of the acquisition round.
func (l *Lock) Votes() Report { return l.votes }

// Until returns the end of the validity: start of the last successful round plus
// TTL minus the drift budget. Mutual exclusion is guaranteed only before it.
func (l *Lock) Until() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.until
}

// Context returns a context cancelled when the lock is released (cause ErrReleased)
// or lost (cause matching ErrLost: validity ended, keep-alive failed or capped).
func (l *Lock) Context() context.Context { return l.ctx }

// Done is closed when the lock is released or lost.
func (l *Lock) Done() <-chan struct{} { return l.ctx.Done() }

// Err returns nil while the lock is held, else the cause: ErrReleased or an error
// matching ErrLost.
func (l *Lock) Err() error { return context.Cause(l.ctx) }

// Extend resets the lock's TTL to ttl on every master where it is still ours. The
// TTL is validated before any I/O; once Until has passed it fails with ErrLost
// without I/O. On success Until moves to the round's start plus ttl minus drift.
// When a majority no longer holds the lock the error matches ErrLost and the lock's
// context is cancelled.
func (l *Lock) Extend(ctx context.Context, ttl time.Duration) error {
	if !l.m.cfg.mut.unvalidatedExtendTTL {
		if err := l.m.checkTTL(ttl); err != nil {
			return err
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.extendLocked(ctx, ttl)
}

func (l *Lock) extendLocked(ctx context.Context, ttl time.Duration) error {
	if l.released {
		return ErrReleased
	}
	if err := context.Cause(l.ctx); err != nil {
		return err
	}
	if !l.m.cfg.clock.Now().Before(l.until) {
		err := fmt.Errorf("%w: validity of %s ended at %s", ErrLost, l.name, l.until.Format(time.RFC3339Nano))
		l.cancel(err)
		return err
	}
	until, _, err := l.m.extend(ctx, l.key, l.value, ttl)
	if err != nil {
		if errors.Is(err, ErrLost) {
			l.cancel(err)
		}
		return err
	}
	l.until = until
	l.ttl = ttl
	l.expiry.Reset(until.Sub(l.m.cfg.clock.Now()))
	return nil
}

// Release deletes the lock on every master where it is still ours and stops the
// keep-alive first, so no renewal races the release. It is idempotent: later calls
// return nil. The error, when not nil, names the masters that did not answer; the
// key stays there until its TTL ends.
func (l *Lock) Release(ctx context.Context) error {
	if l.kaStop != nil {
		l.mu.Lock()
		select {
		case <-l.kaStop:
		default:
			close(l.kaStop)
		}
		l.mu.Unlock()
		<-l.kaDone
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return nil
	}
	l.released = true
	l.expiry.Stop()
	rep := l.m.release(ctx, opRelease, l.key, l.value)
	l.cancel(ErrReleased)
	return partialError(rep)
}

// keepAlive extends the lock every Fraction of its TTL until Release, a cap, or a
// definitive loss.
func (l *Lock) keepAlive(k KeepAlive) {
	defer close(l.kaDone)
	frac := k.Fraction
	if frac <= 0 || frac >= 1 {
		frac = DefaultKeepAliveFraction
	}
	clk := l.m.cfg.clock
	holdEnd := time.Time{}
	if k.MaxHold > 0 {
		holdEnd = l.start.Add(k.MaxHold)
	}
	extensions := 0
	wait := time.Duration(float64(l.ttl) * frac)
	for {
		t := time.NewTimer(wait)
		select {
		case <-l.kaStop:
			t.Stop()
			return
		case <-l.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		if k.MaxExtensions > 0 && extensions >= k.MaxExtensions {
			l.capped(fmt.Sprintf("%d extensions", k.MaxExtensions))
			return
		}
		ttl := l.ttl
		last := false // this extension reaches the maximum hold: the final one
		if !holdEnd.IsZero() {
			left := holdEnd.Sub(clk.Now())
			if left < time.Millisecond {
				l.capped(fmt.Sprintf("maximum hold %v", k.MaxHold))
				return
			}
			if left <= ttl {
				ttl, last = left.Truncate(time.Millisecond), true
			}
		}
		l.mu.Lock()
		var err error
		select {
		case <-l.kaStop:
			l.mu.Unlock()
			return
		default:
			err = l.extendLocked(l.ctx, ttl)
		}
		until := l.until
		l.mu.Unlock()
		switch {
		case err == nil && last:
			l.capped(fmt.Sprintf("maximum hold %v", k.MaxHold))
			return
		case err == nil:
			extensions++
			wait = time.Duration(float64(ttl) * frac)
		case errors.Is(err, ErrLost), errors.Is(err, ErrReleased):
			return
		default:
			// Transient: try again soon, while validity lasts; expire() reports the loss.
			left := until.Sub(clk.Now())
			if left <= 0 {
				return
			}
			wait = min(left/4, 4*l.m.cfg.nodeTimeout)
		}
	}
}

// capped stops the keep-alive: the lock stays valid until Until, then its context
// is cancelled with a cause matching ErrLost and ErrExtensionCap.
func (l *Lock) capped(why string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return
	}
	cause := fmt.Errorf("%w: %w (%s) for %s", ErrLost, ErrExtensionCap, why, l.name)
	d := l.until.Sub(l.m.cfg.clock.Now())
	l.expiry.Stop()
	l.expiry = time.AfterFunc(max(d, 0), func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if !l.released {
			l.cancel(cause)
		}
	})
}
