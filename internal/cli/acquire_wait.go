package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/internal/human"
	"github.com/redlock/redlock/quorum"
)

// How acquire and run wait, as flock(1) does (and consul lock and etcdctl lock):
// without -wait they wait until the names are free or the command is
// interrupted; -wait 0 makes one round and exits 3 at once when held (flock -n);
// -wait D gives up after D (flock -w D). While waiting they say once, on
// stderr, what they wait for and who holds it.

// waitForever is -wait's value when the flag is not given: wait until taken or
// interrupted.
const waitForever = time.Duration(math.MaxInt64)

// waitHelp is the -wait flag's help on acquire and run.
const waitHelp = `how long to wait while NAME is held: by default until it is
free, as flock (Ctrl-C or SIGTERM gives up, nothing left locked);
0 makes one round and exits 3 at once when held (as flock -n: what
a cron line wants); D gives up after D and exits 3 (as flock -w)`

// waitPlan is how an acquisition waits: d is 0 for one round, waitForever for
// no bound; first, when positive, bounds the reads and the first round that come
// before a wait for ever (-timeout; a bounded wait has its own deadline); notice, when not nil, is called once when the first
// round finds the names held, before the acquisition waits.
type waitPlan struct {
	d, first time.Duration
	notice   func(ctx context.Context, err error)
}

// acquireKind takes k: one round when the plan's d is 0, else rounds until d has
// passed (see waitAcquire, whose contract it keeps for every kind). With a
// notice the first round is made alone, so that the wait can be announced;
// under waitForever a first round that finds fewer than a quorum of masters
// returns its error instead of waiting for ever on a dead cluster.
func acquireKind(ctx context.Context, m *quorum.Manager, k lockKind, ttl time.Duration, wait waitPlan, opts ...quorum.LockOption) (taken, error) {
	fctx, cancel := ctx, context.CancelFunc(func() {})
	if wait.first > 0 && wait.d == waitForever {
		fctx, cancel = context.WithTimeout(ctx, wait.first)
	}
	defer cancel()
	if err := checkKindConflict(fctx, m, k); err != nil {
		return taken{}, err
	}
	d := wait.d
	if d > 0 && wait.notice != nil {
		start := time.Now()
		t, err := takeKind(fctx, m, k, ttl, 0, opts)
		switch {
		case err == nil, fctx.Err() != nil:
			return t.ifNotInterrupted(fctx, err)
		case errors.Is(err, quorum.ErrUnavailable) && d == waitForever:
			return taken{}, err
		case errors.Is(err, quorum.ErrHeld):
			wait.notice(ctx, err)
		}
		if d != waitForever {
			if d -= time.Since(start); d <= 0 {
				return taken{}, fmt.Errorf("%w after %s: %w", errWaitExpired, human.Duration(wait.d), err)
			}
		}
	}
	t, err := takeKind(ctx, m, k, ttl, d, opts)
	return t.ifNotInterrupted(ctx, waitExpired(ctx, err, wait.d))
}

// taken is what acquire and run took: the lock, and the slot of a permit.
type taken struct {
	*quorum.Lock
	slot int // the slot of a semaphore's permit
}

// ifNotInterrupted is releaseIfInterrupted for t.
func (t taken) ifNotInterrupted(ctx context.Context, err error) (taken, error) {
	l, err := releaseIfInterrupted(ctx, t.Lock, err)
	if err != nil {
		return taken{}, err
	}
	return taken{l, t.slot}, nil
}

// takeKind makes the acquisition of k: one round when wait is 0, else rounds
// until wait has passed.
func takeKind(ctx context.Context, m *quorum.Manager, k lockKind, ttl, wait time.Duration, opts []quorum.LockOption) (taken, error) {
	switch k.kind() {
	case admin.KindMulti:
		mu, err := m.Multi(k.names...)
		if err != nil {
			return taken{}, err
		}
		l, err := takeOrWait(ctx, ttl, wait, opts, mu.TryAcquire, mu.Acquire)
		return taken{Lock: l}, err
	case admin.KindSemaphore:
		sem, err := m.Semaphore(k.names[0], k.permits)
		if err != nil {
			return taken{}, err
		}
		p, err := takeOrWait(ctx, ttl, wait, opts, sem.TryAcquire, sem.Acquire)
		if err != nil {
			return taken{}, err
		}
		return taken{p.Lock, p.Slot()}, nil
	case admin.KindShared:
		sh, err := m.Shared(k.names[0])
		if err != nil {
			return taken{}, err
		}
		l, err := takeOrWait(ctx, ttl, wait, opts, sh.TryAcquire, sh.Acquire)
		return taken{Lock: l}, err
	}
	l, err := acquireRounds(ctx, m, k.names[0], ttl, wait, opts)
	return taken{Lock: l}, err
}

// takeOrWait makes one round (try) when wait is 0, else one acquisition
// (acquire) for the whole wait: a fair waiter keeps its place in the queue.
func takeOrWait[T any](ctx context.Context, ttl, wait time.Duration, opts []quorum.LockOption,
	try, acquire func(context.Context, time.Duration, ...quorum.LockOption) (T, error)) (T, error) {
	if wait <= 0 {
		return try(ctx, ttl, opts...)
	}
	return acquire(ctx, ttl, append(opts, quorum.WithWait(wait))...)
}

// waitNotice returns the notice of a wait for k, printed on w as prog: what it
// waits for, who holds it and for how long it waits.
func (s *lockSession) waitNotice(w io.Writer, prog string, k lockKind, wait, timeout time.Duration) func(ctx context.Context, err error) {
	return func(ctx context.Context, _ error) {
		var held string
		switch k.kind() {
		case admin.KindMulti:
			held = "a name is held by another owner (all or none are taken)"
		case admin.KindSemaphore:
			held = "every permit is held"
		default:
			held = s.heldBy(ctx, k.names[0], timeout)
		}
		how := "until it is free; Ctrl-C gives up"
		if wait != waitForever {
			how = "at most " + human.Duration(wait)
		}
		fmt.Fprintf(w, "redlock %s: waiting for %s: %s (%s)\n", prog, escape.Text(k.what()), escape.Text(s.redact(held)), how)
	}
}
