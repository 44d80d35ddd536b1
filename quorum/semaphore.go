package quorum

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// Semaphores: up to N holders of a name.
//
// A semaphore of N permits is N slots, NAME:permit:0 .. NAME:permit:N-1, each a
// Redlock mutex with the majority quorum. An acquisition round runs one script on
// every master that takes the first free slot in slot order there (SET NX PX, one
// value); the round holds the slot that a majority of masters gave it, with the
// validity of a plain lock, and releases every other slot it took on a minority.
// Each slot has at most one holder before its Until by Redlock's argument, so
// there are at most N holders. Counting permits on each master and taking a simple
// majority is NOT safe for N >= 2 (SAFETY.md); this design never counts.

// Semaphore is a counting semaphore of one name on a Manager: at most its permit
// count of holders at any instant, under Redlock's assumptions, each holding one permit
// slot. It holds no state of its own besides its name and count, and is safe for
// concurrent use; every client of a name must use the same count (clients with
// different counts share the first slots, so there are at most as many holders as
// the largest count). A semaphore NAME and a plain lock NAME are different keys:
// they do not exclude each other.
//
// It does not guarantee that a permit outlives its Until (watch Permit's Done),
// nor FIFO order unless every client of the name passes WithFair. The zero value
// is not usable: get a Semaphore from Manager.Semaphore.
type Semaphore struct {
	m       *Manager
	name    string
	permits int
}

// Semaphore returns the semaphore of name with permits permits on m. The name
// follows ValidateName; permits must be in [1, MaxPermits] (ErrInvalidArgument). It
// does no I/O.
func (m *Manager) Semaphore(name string, permits int) (*Semaphore, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if err := checkPermits(permits); err != nil {
		return nil, err
	}
	return &Semaphore{m: m, name: name, permits: permits}, nil
}

// Acquire takes one permit, retrying as Manager.Acquire does (a release of a
// permit wakes the waiters; WithWait bounds the wait). With WithFair waiters take
// permits in FIFO order; with WithFencing each slot has its own counter (Fence is
// strictly increasing per slot, not per semaphore: compare it with Slot). A
// cancelled ctx gives an error matching both ErrNotAcquired and ctx.Err();
// nothing is left set on any master.
func (s *Semaphore) Acquire(ctx context.Context, ttl time.Duration, opts ...LockOption) (*Permit, error) {
	return s.take(ctx, ttl, s.m.cfg.attempts, opts)
}

// TryAcquire is Acquire with one round: an error matching ErrHeld when every
// permit is taken.
func (s *Semaphore) TryAcquire(ctx context.Context, ttl time.Duration, opts ...LockOption) (*Permit, error) {
	return s.take(ctx, ttl, 1, opts)
}

func (s *Semaphore) take(ctx context.Context, ttl time.Duration, attempts int, opts []LockOption) (*Permit, error) {
	l, err := s.m.acquire(ctx, s.name, ttl, attempts, primSpec{permits: s.permits, semaphore: true}, opts)
	if err != nil {
		return nil, err
	}
	return &Permit{Lock: l}, nil
}

// Permit is one held permit of a Semaphore: the Lock of one slot. Until, Done,
// Context, Extend, Release, Verify, the keep-alive (WithKeepAlive) and
// WithLossWatch apply to this permit alone; Key is the slot's key. Holding it
// guarantees that at most the semaphore's count of holders exist until Until;
// it does not say which other slots are held.
type Permit struct {
	*Lock
}

// Slot returns the permit's slot index, 0 <= Slot < the semaphore's count.
func (p *Permit) Slot() int { return p.prim.(*permitLock).slot }

// permitLock is the primitive of a held permit.
type permitLock struct {
	n    int
	slot int
	base string // the semaphore's key, NAME:permit (its wake-up channel and queue)
	// strays are the other slots a read found the value in (findPermit): a
	// permit resumed from its token releases them too.
	strays []string
}

func (p *permitLock) extend(ctx context.Context, l *Lock, ttl time.Duration) (time.Time, *Report, error) {
	return l.m.extend(ctx, l.key, l.value, ttl)
}

// release deletes the permit where it is ours and wakes the semaphore's waiters
// (only the head of its queue when fair waiters are queued), markers or not: a
// permit's waiters do not mark themselves (waitmark.go).
func (p *permitLock) release(ctx context.Context, l *Lock) *Report {
	return l.m.scriptOnAll(ctx, opRelease, l.key, releaseW, []string{l.key, p.base + queueSuffix}, nil, l.value, wakeChannel(p.base), "all")
}

// permitAcquirer takes one permit of a semaphore.
type permitAcquirer struct {
	m     *Manager
	name  string
	base  string   // NAME:permit
	slots []string // NAME:permit:0 .. NAME:permit:N-1
	keys  []string // the slots, then the queue (NAME:permit:queue): sem_acquire.lua's keys
}

func (m *Manager) newPermitAcquirer(name string, lc *lockConfig) (acquirer, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if err := checkPermits(lc.permits); err != nil {
		return nil, err
	}
	a := &permitAcquirer{m: m, name: name, base: m.Key(name) + permitBase}
	for i := range lc.permits {
		a.slots = append(a.slots, a.base+":"+strconv.Itoa(i))
	}
	a.keys = append(a.slots[:len(a.slots):len(a.slots)], a.base+queueSuffix)
	return a, nil
}

func (a *permitAcquirer) waitKey() string { return a.base }

// slotRange names every slot at once, as a shell's brace expansion would:
// "lock:sem:permit:{0..2}" (the slot itself for a single permit).
func (a *permitAcquirer) slotRange() string {
	if len(a.slots) == 1 {
		return a.slots[0]
	}
	return fmt.Sprintf("%s:{0..%d}", a.base, len(a.slots)-1)
}

func (a *permitAcquirer) describe(o *Owner) { o.Kind, o.Count = ownerSem, len(a.slots) }

func (a *permitAcquirer) won(context.Context, *Lock) error { return nil }

// round runs sem_acquire.lua on every master, then keeps the slot that most
// masters gave (the lowest on a tie): a Redlock round for that slot. Every other
// slot it took is released.
func (a *permitAcquirer) round(ctx context.Context, start time.Time, value string, ttl time.Duration, fw *fairWaiter) (*Lock, error) {
	m := a.m
	mode, id, score, hb := "", "", "0", "0"
	if fw != nil {
		mode, id, score, hb = fw.mode, fw.id, fw.score, fw.hbMS
	}
	got := make([]int64, len(m.nodes)) // the slot each master gave; < 0 none
	rep := m.scriptOnAll(ctx, opAcquire, a.base, semAcquireScript, a.keys, func(i int, r int64) (Outcome, error) {
		got[i] = r
		if r >= 0 {
			return OutcomeOK, nil
		}
		return OutcomeForeign, nil
	}, value, msArg(ttl), mode, id, score, hb)
	best, stray := a.tally(rep, got)
	if best >= 0 {
		rep.Key = a.slots[best]
	}
	if until, ok := m.score(rep, start, ttl); ok {
		l := &Lock{m: m, name: a.name, key: a.slots[best], value: value, ttl: ttl, votes: *rep, start: start,
			until: until, untilFrom: start, keysUntil: m.keysUntil(start, ttl), prim: &permitLock{n: len(a.slots), slot: best, base: a.base}}
		if stray {
			// In the background: the caller's validity is running, and a master
			// that did not answer the round may not answer this either.
			m.background(func() { a.releaseSlots(backgroundFor(ctx), value, best) })
		}
		m.leaveStragglers(backgroundFor(ctx), a.base, fw, rep)
		return l, nil
	}
	if fw != nil && fw.mode == "wait" {
		a.unwindSlots(backgroundFor(ctx), value, fw)
	} else {
		a.releaseSlots(backgroundFor(ctx), value, -1)
	}
	if best < 0 {
		rep.Key = a.slotRange() // no slot won: the error names every slot tried
	}
	return nil, m.roundError(rep)
}

// unwindSlots is releaseSlots(-1) for a failed round of a queued fair waiter:
// where it deletes a slot the round took, it puts the waiter back at its place
// in the queue in the same step (sem_unwind.lua), so that the waiter behind it
// does not take the slot freed.
func (a *permitAcquirer) unwindSlots(ctx context.Context, value string, fw *fairWaiter) {
	a.m.scriptOnAll(ctx, opRelease, a.base, semUnwindScript, a.keys, released, value, fw.id, fw.score, fw.hbMS)
}

// tally keeps the votes of the slot most masters gave (the lowest on a tie) and
// turns the others into OutcomeForeign. stray tells whether some master took
// another slot, or may have (it did not answer).
func (a *permitAcquirer) tally(rep *Report, got []int64) (best int, stray bool) {
	votes := make([]int, len(a.slots))
	best = -1
	for i, nr := range rep.Nodes {
		switch {
		case nr.Outcome == OutcomeOK && got[i] < int64(len(a.slots)):
			votes[got[i]]++
		case nr.Outcome == OutcomeError:
			stray = true
		}
	}
	for s, v := range votes {
		if v > 0 && (best < 0 || v > votes[best]) {
			best = s
		}
	}
	for i := range rep.Nodes {
		if rep.Nodes[i].Outcome == OutcomeOK && got[i] != int64(best) {
			rep.Nodes[i].Outcome = OutcomeForeign
			stray = true
		}
	}
	rep.Votes = rep.count(OutcomeOK)
	return best, stray
}

// releaseSlots deletes value from every slot but keep (-1: every slot) on every
// master, waking nobody: the clean-up of a round.
func (a *permitAcquirer) releaseSlots(ctx context.Context, value string, keep int) {
	var keys []string
	for i, k := range a.slots {
		if i != keep {
			keys = append(keys, k)
		}
	}
	if len(keys) > 0 {
		a.m.scriptOnAll(ctx, opRelease, a.base, multiReleaseScript, keys, released, value, "0")
	}
}

// checkPermits validates a permit count before any I/O.
func checkPermits(n int) error {
	if n < 1 || n > MaxPermits {
		return fmt.Errorf("%w: %d permits, want 1 to %d", ErrInvalidArgument, n, MaxPermits)
	}
	return nil
}
