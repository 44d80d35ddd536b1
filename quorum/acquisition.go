package quorum

import (
	"context"
	"math"
	"time"
)

// acquisition is one call of Acquire or TryAcquire: the state its rounds share,
// and the clean-ups it owes when it ends (end), won or not. acquireRounds runs it:
// begin, then for each round nextValue, round, failed and wait, until a round wins
// or the acquisition gives up.
type acquisition struct {
	m        *Manager
	name     string
	key      string // the key whose wake-up channel and queue the waiter uses
	ttl      time.Duration
	attempts int
	made     *int // counts the rounds when not nil (the Observer's Event.Rounds)
	lc       lockConfig
	acq      acquirer // nil for a plain lock (primitives.go)
	cancel   context.CancelFunc

	owner Owner     // the owner part of every round's value
	value string    // the value the next round writes
	start time.Time // the next round's start (the clock's reading), for its validity
	// roundStart is when the last round started (real time): a wake-up older than
	// that tells nothing new.
	roundStart time.Time

	fw     *fairWaiter // the fair queue place, nil when not fair
	w      *waiter     // the wake-up registration, once subscribed
	unreg  func()      // ends w's registration
	mk     *waitMark   // the waiter's marker, once it waits (waitmark.go)
	marked bool        // a marker may be left on some master when the acquisition ends
	// xw keeps new shared holders out while a blocking exclusive acquisition waits
	// behind shared ones (shared.go).
	xw     *xwaiter
	delays delayPolicy // made at the first pause

	rounds int   // rounds made
	tries  int   // attempts used
	woken  bool  // the next round follows a wake-up: it does not use an attempt
	last   error // the last round that ran to its end, if any
}

// begin checks the acquisition's arguments and prepares its first round; it
// returns the context the rounds run under (WithWait bounds it). On failure
// nothing was sent; end still runs.
func (a *acquisition) begin(ctx context.Context, kind primSpec, opts []LockOption) (context.Context, error) {
	// The first round's validity counts from the call itself, so that Until is never
	// later than call start + ttl - drift; later rounds count from their own start.
	a.start = a.m.cfg.clock.Now()
	a.lc = lockOptions(a.m.cfg.owner, opts)
	if !kind.plain() {
		a.lc.primSpec = kind
	}
	var err error
	if a.lc.primitive() {
		c := a.lc // the primitives keep a pointer to it: a plain lock's stays off the heap
		a.acq, err = a.m.acquirerFor(a.name, &c)
	} else {
		err = checkName(a.name)
	}
	if err != nil {
		return ctx, err
	}
	if err := a.m.checkTTL(a.ttl); err != nil {
		return ctx, err
	}
	if a.lc.wait > 0 && a.attempts > 1 {
		a.attempts = math.MaxInt
		ctx, a.cancel = context.WithTimeout(ctx, a.lc.wait)
	}
	a.owner = a.newOwner()
	// Every round writes a value of its own: the clean-up of a failed round
	// (compare-and-delete of its value) may reach a master late, after a later
	// round of this call set its key there, and must not delete that key.
	if a.value, err = newValue(a.owner); err != nil {
		return ctx, err
	}
	a.key = a.m.Key(a.name)
	if a.acq != nil {
		a.key = a.acq.waitKey()
	}
	if a.lc.fair {
		if a.fw, err = a.m.newFairWaiter(a.attempts == 1); err != nil {
			return ctx, err
		}
	}
	return ctx, a.listen()
}

// newOwner returns the owner part of the values the rounds write.
func (a *acquisition) newOwner() Owner {
	owner := a.m.owner
	owner.Label = a.lc.owner
	owner.For = nameTag(a.name)
	owner.At = time.Now()
	owner.TTL = a.ttl
	if a.acq != nil {
		described := owner // owner itself stays off the heap
		a.acq.describe(&described)
		owner = described
	}
	return owner
}

// listen registers a waiting acquisition for wake-ups before its first round when
// its name is already listened to (waited for recently): the first round then
// marks already.
func (a *acquisition) listen() error {
	if a.attempts <= 1 {
		return nil
	}
	h := a.m.runningHub()
	if h == nil {
		return nil
	}
	a.w, a.unreg = h.registerIfSubscribed(a.key, a.fw.wakeID())
	if a.w != nil && marks(a.acq, a.fw) {
		var err error
		if a.mk, err = a.m.newWaitMark(); err != nil {
			return err
		}
	}
	return nil
}

// nextValue makes the value of the round about to start, and its start: the
// first round's were made by begin.
func (a *acquisition) nextValue() error {
	if a.rounds == 0 {
		return nil
	}
	// The value says when the lock was taken: this round's time, not the start
	// of a wait that may have lasted hours.
	a.owner.At = time.Now()
	value, err := newValue(a.owner)
	if err != nil {
		return err
	}
	a.value, a.start = value, a.m.cfg.clock.Now()
	return nil
}

// round makes one round, with the fencing and the primitive's follow-up when it
// wins. It returns the started Lock, or why the round failed.
func (a *acquisition) round(ctx context.Context) (*Lock, error) {
	if a.acq != nil && a.mk != nil {
		a.m.markWaiting(ctx, a.key, a.mk, a.ttl)
	}
	a.roundStart = time.Now()
	var l *Lock
	var err error
	if a.acq != nil {
		l, err = a.acq.round(ctx, a.start, a.value, a.ttl, a.fw)
	} else {
		l, err = a.m.round(ctx, a.start, a.name, a.key, a.value, a.ttl, a.fw, a.mk, a.attempts > 1)
	}
	if a.made != nil {
		*a.made++
	}
	if err == nil && a.lc.fencing {
		err = a.m.raiseFence(ctx, l)
	}
	if err == nil && a.acq != nil {
		err = a.acq.won(ctx, l)
	}
	// A plain round that won everywhere dropped its marker there.
	a.marked = a.mk != nil && (err != nil || a.acq != nil || l.votes.count(OutcomeOK) < len(a.m.nodes))
	if err != nil {
		return nil, err
	}
	l.start0(a.lc)
	return l, nil
}

// failed takes the failed round's error err and returns nil when another round
// may follow, else the error the acquisition ends with.
func (a *acquisition) failed(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		// The context ended during this round, so its failures say nothing
		// about the lock: report the last round that ran to its end, if any.
		if a.last == nil {
			a.last = err
		}
		return a.cancelled(ctx)
	}
	a.last = err
	if a.acq == nil && a.attempts > 1 {
		a.xw = a.m.markExclusive(ctx, a.xw, a.key, a.last)
	}
	if !a.woken {
		a.tries++
	}
	if a.tries >= a.attempts || a.m.closed() { // a closed Manager fails every round
		return a.last
	}
	return nil
}

// wait sleeps until the next round is due: at once after a late subscription,
// else the delay policy's pause, which a wake-up ends early.
func (a *acquisition) wait(ctx context.Context) error {
	if a.w == nil {
		if again, err := a.subscribe(ctx); err != nil || again {
			return err
		}
	}
	if a.delays == nil {
		a.delays = a.m.newDelayPolicy(a.fw)
	}
	delay, soon := a.delays.next(a.last, a.woken)
	var t0 time.Time
	if tracing {
		t0 = time.Now()
	}
	woken, err := a.m.await(ctx, a.w, a.roundStart, delay)
	if tracing {
		traceAwait(t0, delay, woken)
	}
	if err != nil {
		return a.cancelled(ctx)
	}
	a.woken = woken || soon // a round after a short pause continues a woken one: no attempt used
	return nil
}

// subscribe registers the waiter for wake-ups after its first failed round. again
// tells that the next round is due at once (and follows a wake-up).
func (a *acquisition) subscribe(ctx context.Context) (again bool, err error) {
	h := a.m.hub()
	if h == nil {
		return false, nil
	}
	a.w, a.unreg = h.register(a.key, a.fw.wakeID())
	// A release between the failed round and the subscription would go
	// unnoticed: once subscribed, try again at once.
	if a.woken, err = a.m.subscribed(ctx, a.w); err != nil {
		return false, a.cancelled(ctx)
	}
	if a.fw != nil {
		a.fw.late = a.woken
	}
	if marks(a.acq, a.fw) {
		// Nor does a release before the waiter's marker is in place publish
		// anything: try again at once, marking.
		if a.mk, err = a.m.newWaitMark(); err != nil {
			return false, err
		}
		a.woken = true
	}
	// It follows a release as a woken round does: the waiters that release freed
	// may collide in it (collided).
	return a.woken, nil
}

// cancelled is the error of an acquisition ended by ctx (cancelled).
func (a *acquisition) cancelled(ctx context.Context) error {
	return a.m.cancelled(a.key, a.last, ctx)
}

// giveUp ends a failed acquisition with err: a fair waiter leaves the queue on
// every master.
func (a *acquisition) giveUp(ctx context.Context, err error) error {
	if a.fw != nil {
		a.m.leave(backgroundFor(ctx), a.key, a.fw)
	}
	return err
}

// end undoes what the acquisition leaves behind, won or not: its marker on the
// masters, its wake-up registration, its exclusive waiter's marker, and the
// context of its wait.
func (a *acquisition) end(ctx context.Context) {
	if a.marked {
		a.m.unmark(backgroundFor(ctx), a.key, a.mk)
	}
	if a.unreg != nil {
		a.unreg()
	}
	if a.xw != nil {
		a.xw.clear(backgroundFor(ctx), a.m)
	}
	if a.cancel != nil {
		a.cancel()
	}
}
