package quorum

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redlock/redlock/quorum/observe"
)

// LockOption configures one acquisition.
type LockOption func(*lockConfig)

type lockConfig struct {
	owner     string
	keepAlive *KeepAlive
	fencing   bool
	fair      bool
	wait      time.Duration
	watch     bool
	// The primitive taken (primitives.go), and a test's replacement of the
	// acquirer.
	primSpec
	override func(m *Manager, name string, lc *lockConfig) (acquirer, error)
}

// primSpec is the primitive an acquisition takes, set by the type it is taken
// through (Semaphore, Shared, Multi); the zero value is the plain mutex. It is
// not a LockOption: a caller cannot ask the mutex for a permit.
type primSpec struct {
	permits   int
	semaphore bool // a permit of a semaphore of permits
	shared    bool
	multi     []string // the sorted names of a multi-name hold
}

// plain reports whether k is the plain mutex.
func (k primSpec) plain() bool { return !k.semaphore && !k.shared && k.multi == nil }

// lockOptions returns the configuration of one acquisition: the Manager's owner
// label, then opts. Without options it allocates nothing.
func lockOptions(owner string, opts []LockOption) lockConfig {
	if len(opts) == 0 {
		return lockConfig{owner: owner}
	}
	c := lockConfig{owner: owner}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// primitive reports whether c asks for a primitive (or a test's acquirer):
// acquirerFor then returns its acquirer; a plain lock only checks its name.
func (c *lockConfig) primitive() bool {
	return c.override != nil || !c.plain()
}

// WithLockOwner overrides the Manager's owner label for one lock.
func WithLockOwner(label string) LockOption { return func(c *lockConfig) { c.owner = label } }

// WithWait makes Acquire try until d has passed since the call (or its context
// ends first), however many rounds that takes: the retry policy's attempt count does
// not apply, its delays do. A fair waiter (WithFair) keeps its place in the queue for
// the whole wait. It has no effect on TryAcquire. d <= 0 leaves the policy as it is.
func WithWait(d time.Duration) LockOption { return func(c *lockConfig) { c.wait = d } }

// Lock is a lock held on a quorum of masters until Until: the plain mutex
// (Manager.Acquire), a shared hold (Shared), a multi-name hold (Multi), and the
// hold inside a Permit and a Leadership; what it holds depends on the type it
// was taken through, what it does (Until, Done, Extend, Release, ...) does not.
// It is safe for concurrent use. Holding a Lock guarantees mutual exclusion only until Until, and only under
// the Manager's assumptions; watch Done (or Context) to learn that it was lost: Done
// is closed at Until at the latest, unless an extension completed before it.
type Lock struct {
	m     *Manager
	name  string
	key   string
	value string
	fence int64
	votes Report
	prim  primitive // nil for a plain lock (primitives.go)
	// releaseTo is the room for the release round's report made with the Lock
	// (newLockReport), nil when there is none or once used.
	releaseTo *reportOf5
	start     time.Time // acquisition round start (the injectable clock)
	// acquired is when the acquisition returned (real time), for Event.Held.
	acquired time.Time

	// mu guards the fields below. It is never held across I/O: the expiry timer and
	// Until must not wait for a round in flight.
	mu sync.Mutex
	// cause is nil while the lock is held, then why it ended (ErrReleased, or an
	// error matching ErrLost); the first cause set stays. Err reads it.
	cause error
	// ctx, cancel and expiry are made by watch, on the first call of Context or
	// Done (or at acquisition when a keep-alive, a loss watch or an Observer
	// needs them): most holders never watch, and pay for neither a context nor a
	// timer. Once made, ctx is cancelled with cause when the lock ends, and expiry
	// cancels it at Until at the latest; before, Err compares Until with the clock.
	ctx    context.Context
	cancel context.CancelCauseFunc
	expiry *time.Timer
	// op serialises extensions (Extend and the keep-alive's): two rounds in flight
	// could complete out of order and leave Until later than the masters' keys. It
	// is held across the round's I/O, so nothing that keeps time ever waits for it.
	// Made on the first extension (opChan).
	op    chan struct{}
	until time.Time
	// untilFrom is the start of the round that set until (the clock's reading
	// before its first command was sent): validFrom.
	untilFrom time.Time
	ttl       time.Duration
	// keysUntil bounds when the copies on the masters expire (by the clock): the
	// latest round start plus the node timeout, its TTL and its drift budget, over
	// every round sent, successful or not.
	keysUntil time.Time
	released  bool
	ended     bool          // released or lost: reported to the Observer once
	lostWhy   error         // the cause expire() gives, when set (a keep-alive cap)
	changed   chan struct{} // closed when until changes; nil until UntilChanged asks for it
	kaStop    chan struct{}
	kaDone    chan struct{}
	kaCancel  context.CancelFunc
}

// checkTTL validates a TTL before any I/O: whole milliseconds (the masters count in
// milliseconds, and Until must not count a fraction they do not), at least 1ms, and
// not above the maximum.
func (m *Manager) checkTTL(ttl time.Duration) error {
	switch {
	case ttl < time.Millisecond:
		return fmt.Errorf("%w: ttl %v must be at least 1ms", ErrInvalidArgument, ttl)
	case ttl%time.Millisecond != 0:
		return fmt.Errorf("%w: ttl %v is not a whole number of milliseconds", ErrInvalidArgument, ttl)
	case ttl > m.cfg.maxTTL:
		return fmt.Errorf("%w: ttl %v above the maximum %v", ErrInvalidArgument, ttl, m.cfg.maxTTL)
	}
	return nil
}

// start0 finishes a fresh lock: its keep-alive and loss watch, and its context
// and expiry timer when they or the Observer need them (else on first use: watch).
func (l *Lock) start0(lc lockConfig) {
	l.acquired = time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if lc.keepAlive != nil || lc.watch || l.m.cfg.observer != nil {
		l.watch() // the Observer hears of a loss at Until, watched or not
	}
	if lc.keepAlive != nil {
		l.kaStop = make(chan struct{})
		l.kaDone = make(chan struct{})
		var kctx context.Context
		kctx, l.kaCancel = context.WithCancel(context.Background())
		go l.keepAlive(kctx, *lc.keepAlive)
	}
	if lc.watch || lc.keepAlive != nil {
		l.watchLosses()
	}
}

// watch makes the lock's context and arms its expiry timer, once; a lock that
// has already ended gets a context cancelled with its cause. l.mu must be held.
func (l *Lock) watch() context.Context {
	if l.ctx != nil {
		return l.ctx
	}
	l.ctx, l.cancel = context.WithCancelCause(context.Background())
	if l.cause != nil {
		l.cancel(l.cause)
		return l.ctx
	}
	// A validity already over fires at once: expire reports the loss.
	l.expiry = time.AfterFunc(l.until.Sub(l.m.cfg.clock.Now()), l.expire)
	return l.ctx
}

// end records cause as the end of the lock (the first cause stays) and cancels its
// context, if made. l.mu must be held.
func (l *Lock) end(cause error) {
	if l.cause == nil {
		l.cause = cause
	}
	if l.cancel != nil {
		l.cancel(cause)
	}
}

// expire cancels the lock's context when its validity has run out without extension.
func (l *Lock) expire() {
	l.mu.Lock()
	if l.released || l.cause != nil {
		l.mu.Unlock()
		return
	}
	if d := l.until.Sub(l.m.cfg.clock.Now()); d > 0 { // extended meanwhile
		l.expiry.Reset(d)
		l.mu.Unlock()
		return
	}
	ev := l.lose(l.lostCause())
	l.mu.Unlock()
	l.report(ev)
}

// lose cancels the lock's context with cause err (a loss) and marks the lock
// ended. l.mu must be held. It returns the event to report once l.mu is released,
// nil when the lock had already ended.
func (l *Lock) lose(err error) *observe.Event {
	l.end(err)
	if l.ended {
		return nil
	}
	l.ended = true
	if l.m.cfg.observer == nil {
		return nil
	}
	cause := observe.CauseExpired
	var re *RoundError
	switch {
	case errors.Is(err, ErrExtensionCap):
		cause = observe.CauseCap
	case errors.As(err, &re):
		cause = observe.CauseMajority
	}
	return &observe.Event{Kind: observe.EventLost, Name: l.name, Cause: cause, Held: time.Since(l.acquired)}
}

// report hands an event to the Observer; l.mu must not be held.
func (l *Lock) report(ev *observe.Event) {
	if ev != nil {
		l.m.observe(*ev)
	}
}

// lostCause is the cause of a loss at the end of the validity. l.mu must be held.
func (l *Lock) lostCause() error {
	if l.lostWhy != nil {
		return l.lostWhy
	}
	return fmt.Errorf("%w: validity of %s ended at %s", ErrLost, l.name, l.until.Format(time.RFC3339Nano))
}

// setUntil moves the deadline and re-arms the expiry timer. l.mu must be held.
func (l *Lock) setUntil(until, now time.Time) {
	if until.Equal(l.until) {
		return
	}
	l.until = until
	if l.expiry != nil {
		l.expiry.Reset(until.Sub(now))
	}
	l.fireChanged()
}

// fireChanged closes the channel UntilChanged gave out, if any: the next call
// makes a new one. l.mu must be held.
func (l *Lock) fireChanged() {
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
}

// untilChanged is UntilChanged with l.mu held.
func (l *Lock) untilChanged() chan struct{} {
	if l.changed == nil {
		l.changed = make(chan struct{})
	}
	return l.changed
}

// opChan returns op, made on first use.
func (l *Lock) opChan() chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.op == nil {
		l.op = make(chan struct{}, 1)
	}
	return l.op
}

// Name returns the lock name (a multi-name lock's names, sorted, joined by a
// space).
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
// TTL minus the drift budget. Mutual exclusion is guaranteed only before it. It never
// waits for a round in flight: during an extension it returns the deadline before
// it (or an earlier one, when the extension asks for a shorter TTL).
func (l *Lock) Until() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.until
}

// UntilChanged returns a channel closed at the next change of Until (an extension,
// or a shorter final extension of the keep-alive's MaxHold), or when a keep-alive
// cap makes Until final (see Capped). Call it again after it fires to watch the
// following change. It does not fire when the lock is lost or released: watch Done
// for that.
func (l *Lock) UntilChanged() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.untilChanged()
}

// Context returns a context cancelled when the lock is released (cause ErrReleased)
// or lost (cause matching ErrLost: validity ended, keep-alive failed or capped). It
// is cancelled no later than Until unless an extension completed before Until.
func (l *Lock) Context() context.Context {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.watch()
}

// Done is closed when the lock is released or lost, no later than Until unless an
// extension completed before Until (the timer's own scheduling delay aside).
func (l *Lock) Done() <-chan struct{} { return l.Context().Done() }

// Err returns nil while the lock is held, else the cause: ErrReleased or an error
// matching ErrLost (from Until on, unless an extension completed before it).
func (l *Lock) Err() error {
	l.mu.Lock()
	if l.cause != nil || l.released {
		defer l.mu.Unlock()
		return l.cause
	}
	if l.m.cfg.clock.Now().Before(l.until) {
		l.mu.Unlock()
		return nil
	}
	// Until has passed, and no expiry timer (or a late one) said so yet.
	err := l.lostCause()
	ev := l.lose(err)
	l.mu.Unlock()
	l.report(ev)
	return err
}

// Release cancels the lock's context (cause ErrReleased), stops the keep-alive, and
// deletes the lock on every master where it is still ours. Done fires before the
// first delete is sent. It is idempotent: later calls return nil. When some master
// did not answer, the key stays there until its TTL ends and the error names it:
// a *PartialReleaseError matching ErrPartialRelease (with when that copy expires at
// the latest) when a quorum answered, and the lock counts as released; a
// *RoundError matching ErrUnavailable when fewer than a quorum answered.
func (l *Lock) Release(ctx context.Context) error {
	l.stopKeepAlive()
	l.mu.Lock()
	if l.released {
		l.mu.Unlock()
		return nil
	}
	l.released = true
	keysUntil := l.keysUntil
	if l.expiry != nil {
		l.expiry.Stop()
	}
	l.end(ErrReleased)
	var ev *observe.Event
	if !l.ended {
		l.ended = true
		if l.m.cfg.observer != nil {
			ev = &observe.Event{Kind: observe.EventRelease, Name: l.name, Held: time.Since(l.acquired)}
		}
	}
	l.mu.Unlock()
	l.report(ev)
	var rep *Report
	if l.prim == nil {
		// A plain lock: Manager.release (waking the name's waiters), into the
		// report made with the Lock.
		rep = l.m.releaseRoundTo(ctx, l.releaseReport(), l.value)
	} else {
		rep = l.releaseRound(ctx)
	}
	return releaseError(rep, keysUntil)
}
