package quorum

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redlock/redlock/internal/keyspace"
	"github.com/redlock/redlock/internal/wire"
)

// Fair locks: the FIFO queue of waiters of the fair-lock thesis, on every master.
//
// Each master keeps, beside the lock key, a sorted set "<lock key>:queue" of the
// waiters. A waiter enqueues with a score it chooses once (its enqueue time in Unix
// ms to the microsecond, from one clock read: queueScore) and the same member everywhere, so all masters agree on
// the order (ties broken by the member). In one script per master it prunes waiters
// whose heartbeat expired, re-enqueues itself and refreshes its heartbeat, and takes
// the lock with SET NX only if it is the head of the queue there; it needs a quorum
// of such grants, like any Redlock round. Every round of a waiting Acquire is a
// heartbeat, so a waiter that crashes stops heart-beating and is dropped after the
// heartbeat TTL: the queue never stays stuck behind it. A waiter leaves the queue on
// success (in the same script), on cancellation and on giving up.
//
// A release wakes only the head of the queue (wake_target.go), which is the only
// waiter that can take the lock. The queue then moves on within a round trip while
// its head is alive; when the head gives up, its leaving wakes the next one; when it
// died or stopped, the others take over at their next retry after its heartbeat
// expired: at most its heartbeat TTL after its last round, plus one retry delay and
// a round.
//
// Fairness holds among clients that all take the name in fair mode: a plain
// (non-fair) acquirer ignores the queue.

var (
	//go:embed scripts/fair_acquire.lua
	fairAcquireSrc string
	fairAcquireLua = withKeepFlag(withWakeHead(fairAcquireSrc))

	//go:embed scripts/fair_unwind.lua
	fairUnwindSrc string
	fairUnwindLua = withKeepFlag(withWakeHead(fairUnwindSrc))

	//go:embed scripts/fair_leave.lua
	fairLeaveSrc string
	fairLeaveLua = withWakeHead(fairLeaveSrc)
)

var (
	fairUnwindScript = wire.NewScript(fairUnwindLua)
	fairLeaveScript  = wire.NewScript(fairLeaveLua)
)

// replyFairShared is fair_acquire.lua's reply where the key is held by something
// other than a string (shared holders).
const replyFairShared = -3

// fairHeld is a fair round's holder (NodeResult.holder) on a master that answered
// that an exclusive holder has the key or that another waiter is ahead: not a value
// (the script does not read it), but not "unknown" either, so that a waiter that no
// shared holder keeps out does not mark itself against them (shared.go: a failed
// round costs no marking round), while the head that shared holders keep out (-3)
// still does.
const fairHeld = "\x00fair"

// queueSuffix is the reserved suffix of a lock's queue key.
const queueSuffix = keyspace.QueueSuffix

// waitingSuffix is the suffix of a lock's waiting flag: a string that lives while
// a waiter of the lock keeps a marker or a place in its queue key, which a plain
// lock's release deletes with the lock key and so learns whether anyone waits
// (release.lua). It ends like a queue key, a suffix that every version of this
// tool refuses at the end of a lock name, and what comes before it holds a space,
// which no lock name of this tool holds: it is no lock's key nor another lock's
// queue, whichever version wrote them. Listings treat it as the queue keys.
const waitingSuffix = keyspace.WaitingSuffix

// sideName reports whether name (a key without the prefix) is a queue key or a
// waiting flag: bookkeeping of the wake-ups, never listed as a lock. The suffix is
// matched on the name, so a prefix never makes a lock a side key (a lock named
// "queue" under the prefix "lock:").
func sideName(name string) bool {
	return len(name) > len(queueSuffix) && strings.HasSuffix(name, queueSuffix)
}

// WithFair takes the lock in FIFO order: Acquire joins the name's queue on every
// master and takes the lock only when it is the head on a quorum; TryAcquire takes it
// only when nobody is queued ahead. All clients of the name must use WithFair (a
// topology's `fair = true` policy) for the order to hold. It does not make a lock
// safer, only fairer; the mutual exclusion guarantees are those of any Lock.
func WithFair() LockOption { return func(c *lockConfig) { c.fair = true } }

// fairWaiter is one acquisition's place in the queue.
type fairWaiter struct {
	// unwinding counts the clean-ups of its failed rounds still running in the
	// background (unwind), and unwound tells whether there ever was one: the
	// waiter leaves the queue after them (leaveStragglers, leave), since one may
	// put it back at its place on a master after the leaving's ZREM (its EVAL,
	// after a NOSCRIPT, written behind the later commands of the connection).
	unwinding sync.WaitGroup
	unwound   atomic.Bool
	id        string // "<random>.<the Manager's wake tag>" (wake_target.go)
	score     string
	hbMS      string
	mode      string // "wait" or "try"
	soon      int    // short pauses in a row (releaseInFlight)
	climb     bool   // they double: they follow a newcomer's first grant (releaseInFlight)
	head      bool   // a round of this acquisition was granted somewhere (releaseInFlight)
	late      bool   // the next round follows a late subscription, not a wake-up (releaseInFlight)
}

// maxSoon bounds the short pauses in a row of releaseInFlight.
const maxSoon = 3

// releaseInFlight reports whether the waiter's failed round last was granted by
// some masters (the waiter is the head there and the lock free) but not by a
// quorum, where a release is likely on its way to the others, and so the waiter
// tries again after a short pause instead of its whole retry delay delay: pause.
// Two cases:
//   - the round followed a wake-up (woken) or a pause of this kind: the release
//     that woke it has not been run by the others yet (the first master that
//     published woke it; it was sent to them before: a round writes the masters
//     the waiters listen on last, wake_narrow.go, but a master may run it late).
//     Their messages may go where the waiter does not listen (wake_narrow.go), so
//     it tries again after short pauses, at most maxSoon in a row;
//   - the first round of this acquisition granted anywhere, which no wake-up
//     started: the waiter became the head on those masters while a release was
//     running on the others. That release may have woken another waiter where the
//     newcomer was not queued yet (the newcomer sorts ahead of it: the same enqueue
//     time to the microsecond, or another client's clock), and woken the newcomer
//     only where it does not listen (wake_narrow.go): nobody wakes it, and the
//     queue stood still for the newcomer's whole retry delay
//     (TestBugFairNewcomerAheadOfTheWokenHeadStallsTheQueue). The round at once
//     after its first one when its subscription was confirmed only then (late)
//     counts as such a round too, not a woken one: a waiter that had not listened
//     before gave up after maxSoon short pauses
//     (TestBugFairColdNewcomerAheadOfTheWokenHeadStallsTheQueue). It tries again after
//     pauses that double each time (backoffDelay), while its rounds are granted
//     somewhere, until a pause could reach the retry delay delay.
//
// A round granted nowhere (a waiter behind others) keeps the retry delay, and so
// does a later round that no wake-up started: a head that a holder keeps out on a
// quorum makes a few more rounds once in its wait (about log2 of the retry delay
// over a round's length) and none after that.
func (w *fairWaiter) releaseInFlight(last error, woken bool, delay time.Duration) (pause time.Duration, ok bool) {
	if w == nil || w.mode != "wait" {
		return 0, false
	}
	if w.late { // the first round's retry at once, which no release started
		woken, w.late = false, false
	}
	var re *RoundError
	granted := errors.As(last, &re) && re.Report.Votes > 0 && errors.Is(re.Kind, ErrHeld)
	n := 0
	first := granted && !w.head
	w.head = w.head || granted
	switch {
	case !granted:
	case first && !woken:
		w.soon, w.climb, n = 1, true, 1
	case w.climb && backoffSpan(last, w.soon+1) < delay:
		w.soon++
		n = w.soon
	case !w.climb && woken && w.soon < maxSoon:
		w.soon++
		n = 1
	}
	if n == 0 {
		w.soon, w.climb = 0, false
		return 0, false
	}
	return backoffDelay(last, delay, n), true
}

func (m *Manager) newFairWaiter(try bool) (*fairWaiter, error) {
	var b [9]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	w := &fairWaiter{
		id:    base64.RawURLEncoding.EncodeToString(b[:]) + "." + m.wakeTag,
		score: queueScore(time.Now()),
		hbMS:  strconv.FormatInt(m.heartbeatTTL().Milliseconds(), 10),
		mode:  "wait",
	}
	if try {
		w.mode = "try"
	}
	return w, nil
}

// queueScore is a waiter's place in the queue: its enqueue time in Unix
// milliseconds, to the microsecond ("1795801312499.968"). Whole milliseconds made
// two waiters of one millisecond tie, and the tie went by their random ids: a
// newcomer sorted ahead of the waiter that asked up to a millisecond before it, and
// could take its place after a release had woken it
// (TestBugFairNewcomerAheadOfTheWokenHeadStallsTheQueue). Microseconds keep the
// order of asking within one host; the queue's clients may still disagree by
// their clocks' difference, which releaseInFlight copes with. A sorted set's score
// is a double: today's Unix time in ms with three decimals has 16 significant
// digits, which a double holds to within a fraction of a microsecond, so the order
// is exact; a waiter of an older version (whole milliseconds) sorts among these by
// the same clock.
func queueScore(t time.Time) string {
	us := t.UnixMicro()
	b := strconv.AppendInt(make([]byte, 0, 24), us/1000, 10)
	frac := us % 1000
	return string(append(b, '.', byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10)))
}

// wakeID is the id under which the waiter listens for wake-ups: a release of the
// name then wakes it only when it is the head of the queue (wake.go). A "try" waiter
// is never queued, and no fair waiter at all (nil) wakes on every release: "".
func (w *fairWaiter) wakeID() string {
	if w == nil || w.mode != "wait" {
		return ""
	}
	return w.id
}

// heartbeatTTL is how long a waiter stays queued without a round: four times the
// longest gap between two rounds of a waiting Acquire (the longest retry delay plus
// one round's node timeout), at least a second.
func (m *Manager) heartbeatTTL() time.Duration {
	return max(4*(m.cfg.delay+m.cfg.jitter+m.cfg.nodeTimeout), time.Second)
}

// leave removes the waiter from the queue on every master. Where it was the head
// and the lock is free, it wakes the new head (fair_leave.lua): a waiter that gives
// up right after a release named it does not leave the queue idle for a retry delay.
// A waiter whose failed rounds left clean-ups running in the background leaves
// after them, in the background too.
func (m *Manager) leave(ctx context.Context, key string, w *fairWaiter) {
	if w == nil || w.mode != "wait" {
		return
	}
	qkey := key + queueSuffix
	keys := []string{key, qkey}
	channel := wakeChannel(key)
	leave := func() {
		m.scriptEach(ctx, "leave", qkey, fairLeaveScript, ":", nil, keys, func(int, *wire.Result) (Outcome, error) {
			return OutcomeOK, nil
		}, w.id, channel)
	}
	if !w.unwound.Load() {
		leave()
		return
	}
	m.background(func() {
		w.unwinding.Wait()
		leave()
	})
}

// leaveStragglers removes a fair lock's winner from the queue on the masters that did
// not grant it (their copy of the queue may still hold it), in the background.
func (m *Manager) leaveStragglers(ctx context.Context, key string, w *fairWaiter, rep *Report) {
	if w == nil || w.mode != "wait" {
		return
	}
	only := make([]bool, len(m.nodes))
	todo := false
	for i, nr := range rep.Nodes {
		only[i] = nr.Outcome != OutcomeOK
		todo = todo || only[i]
	}
	if todo {
		// Best effort: when it fails, the heartbeat TTL drops the entry anyway.
		// After the clean-ups of the waiter's failed rounds, which may put it
		// back (TestBugFairUnwindAfterTheWinningRoundPutsTheHolderBackInTheQueue).
		m.bestEffortAfter(ctx, &w.unwinding, only, "ZREM", key+queueSuffix, "q:"+w.id, "h:"+w.id)
	}
}

// background counts a clean-up that cleanUp leaves to the background
// (unwinding); done is called when it ends.
func (w *fairWaiter) background() (done func()) {
	w.unwound.Store(true)
	w.unwinding.Add(1)
	return w.unwinding.Done
}

// unwind cleans up a failed fair round rep: on every master where the round may
// have set the key, where the key is ours it is deleted and the waiter put back at
// its place in the queue, atomically, so that the next waiter cannot take the hole
// the round left (and block us in turn). A master that answered that it did not
// set the key (OutcomeForeign: held, or another waiter ahead) is left alone: the
// script ran there whole and set nothing, so there is nothing to undo, and a round
// that lost everywhere (a waiter that is not the head, the common case) costs no
// second round. A master that failed, timed out or is quarantined may have set it:
// it is cleaned up, in the background where it gave no reply (cleanUp). A "try"
// waiter was never queued: plain release.
func (m *Manager) unwind(ctx context.Context, key, value string, w *fairWaiter, rep *Report) {
	m.cleanUp(ctx, rep, notRefused, w.background, func(ctx context.Context, only []bool) {
		if w.mode != "wait" {
			m.releaseQuiet(ctx, key, value, only)
			return
		}
		// Best effort: a key left set expires with its TTL, and the waiter's next
		// round re-enqueues it at its place. The Observer hears of each master's
		// answer; the masters left alone are not in its report.
		m.scriptEach(ctx, opRelease, key, fairUnwindScript, ":", only, []string{key, key + queueSuffix}, func(_ int, r *wire.Result) (Outcome, error) {
			return outcomeOf(r.Int), nil
		}, value, w.id, w.score, w.hbMS, wakeChannel(key))
	})
}
