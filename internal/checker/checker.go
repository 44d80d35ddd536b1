// Package checker records the history of a lock test and checks it for safety
// violations: overlapping holds of different owners, lock keys without a TTL, keys
// left behind, foreign tokens touching another owner's key, validity deadlines
// later than the algorithm allows, a lost signal (Done) later than the deadline,
// and untyped failures; and the primitives' invariants (primitives.go): at most N
// holders of a semaphore, shared holds never overlapping an exclusive one, terms
// increasing, and all names of a multi-name hold or none.
//
// A hold lasts from the moment the acquisition returned to the moment its holder
// stopped relying on it: when it saw Done fire or called Release, whichever came
// first. The deadline the library reports (Until) is checked against the
// algorithm's bound, but the hold does not end there: a holder's code stops when
// Done fires, so that is what mutual exclusion is checked on.
//
// All times are taken from one monotonic clock (time.Now in the test process), so
// mutual exclusion can be checked exactly. The package knows nothing of the lock
// library: tests translate their events into Record calls.
package checker

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// BoundSlack is how much later than start + ttl - drift a deadline may be: the
// library's drift budget and the test's are computed separately.
const BoundSlack = time.Millisecond

// DoneSlack is how much later than the lock's deadline its holder may see Done
// fire: the expiry timer's and the watching goroutine's scheduling on a loaded
// machine. It does not loosen mutual exclusion, which is checked on the moment
// Done was seen.
const DoneSlack = 20 * time.Millisecond

// Hold is one successful acquisition and its extensions, until released.
type Hold struct {
	rec        *Recorder
	Owner      string   `json:"owner"`
	Lock       string   `json:"lock"`
	Pieces     []Piece  `json:"pieces"`
	ReleasedAt *float64 `json:"released_ms,omitempty"`
	DoneAt     *float64 `json:"done_ms,omitempty"`
	// The primitives (primitives.go): every name of a multi-name hold (Lock is
	// the first), a shared hold, a leadership's term.
	Locks  []string `json:"locks,omitempty"`
	Shared bool     `json:"shared,omitempty"`
	Term   int64    `json:"term,omitempty"`
	// doneDue is the deadline Done was due at (ms), set with DoneAt.
	doneDue float64
	// timerLate is how late a timer of the test process due at the hold's
	// deadline fired (TimerLate).
	timerLate time.Duration
}

// Piece is one successful acquire or extend: held from From (when the call returned)
// to Until (the lock's validity deadline, converted to real time).
type Piece struct {
	Op    string  `json:"op"`
	From  float64 `json:"from_ms"`
	Until float64 `json:"until_ms"`
}

// Event is a free-form entry of the history (faults, failures), for the JSON dump.
type Event struct {
	At   float64 `json:"at_ms"`
	What string  `json:"what"`
}

// Interval is one piece clipped at the release: [From, To) in ms since the start.
type Interval struct {
	Owner string  `json:"owner"`
	Lock  string  `json:"lock"`
	From  float64 `json:"from_ms"`
	To    float64 `json:"to_ms"`
}

// Violation is one broken safety property.
type Violation struct {
	Kind   string `json:"kind"`
	Detail string `json:"detail"`
}

// Violation kinds.
const (
	KindOverlap  = "overlap"
	KindNoTTL    = "key-without-ttl"
	KindLeftover = "key-left-behind"
	KindForeign  = "foreign-token-touched-key"
	KindBound    = "validity-past-bound"
	KindLateDone = "done-after-deadline"
	KindUntyped  = "untyped-failure"
	KindScenario = "scenario"
)

// Recorder collects a history. It is safe for concurrent use.
type Recorder struct {
	Seed int64
	base time.Time

	mu         sync.Mutex
	limits     map[string]int // locks with more than one holder allowed (Limit)
	holds      []*Hold
	events     []Event
	violations []Violation
	lags       []lagSample // the scheduling probe's samples, in order
	pending    *lagSample  // the probe's wake-up it awaits (nil when not probing)
	// threadWaits are the threads' run-queue waits (sampleThreads), in order.
	threadWaits []threadWait
}

// New returns a recorder whose clock starts now. seed is printed on failure.
func New(seed int64) *Recorder { return &Recorder{Seed: seed, base: time.Now()} }

func (r *Recorder) ms(t time.Time) float64 { return float64(t.Sub(r.base)) / float64(time.Millisecond) }

// Acquired records a successful acquisition that returned at returned and is valid
// until until (both real, monotonic times).
func (r *Recorder) Acquired(owner, lock string, returned, until time.Time) *Hold {
	h := &Hold{rec: r, Owner: owner, Lock: lock}
	h.Pieces = []Piece{{Op: "acquire", From: r.ms(returned), Until: r.ms(until)}}
	r.mu.Lock()
	r.holds = append(r.holds, h)
	r.mu.Unlock()
	return h
}

// Extended records a successful extension that returned at returned, valid until until.
func (h *Hold) Extended(returned, until time.Time) {
	r := h.rec
	r.mu.Lock()
	defer r.mu.Unlock()
	h.Pieces = append(h.Pieces, Piece{Op: "extend", From: r.ms(returned), Until: r.ms(until)})
}

// Released records the time release was called; the hold ends there at the latest.
func (h *Hold) Released(at time.Time) {
	r := h.rec
	r.mu.Lock()
	defer r.mu.Unlock()
	if h.ReleasedAt == nil {
		v := r.ms(at)
		h.ReleasedAt = &v
	}
}

// Done records the moment the holder saw the lock's Done fire, and the lock's
// deadline then (both real, monotonic times). The hold ends there at the latest;
// Done seen later than until + DoneSlack is a violation, unless the test process
// itself was not scheduled in that window (see ProbeScheduling).
func (h *Hold) Done(at, until time.Time) {
	r := h.rec
	r.mu.Lock()
	defer r.mu.Unlock()
	if h.DoneAt != nil {
		return
	}
	v := r.ms(at)
	h.DoneAt = &v
	h.doneDue = r.ms(until)
}

// TimerLate records how late a timer of the test process, due at the hold's
// deadline (due, real time) and armed like the lock's own expiry, fired: the
// part of Done's lateness the machine caused on that timer. A timer still pending
// at the time of the call counts as late until then. Only the latest deadline's
// timer counts: the hold's Done is checked against that one.
func (h *Hold) TimerLate(due, fired time.Time) {
	r := h.rec
	r.mu.Lock()
	defer r.mu.Unlock()
	h.timerLate = max(0, fired.Sub(due))
}

// Event adds a note to the history (a fault, a failure) at the current time.
func (r *Recorder) Event(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, Event{At: r.ms(time.Now()), What: fmt.Sprintf(format, args...)})
}

// Violate records a violation found by the test itself.
func (r *Recorder) Violate(kind, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.violations = append(r.violations, Violation{Kind: kind, Detail: fmt.Sprintf(format, args...)})
}

// Bound checks a deadline against the round that set it, all in the client's own
// clock: the round (whose start from is the library's reading before its first
// command was sent) must have started after the call did (called), and the
// deadline must be no later than from + ttl - drift (plus BoundSlack). Checking
// against the round's own start, rather than against called, keeps the check exact
// however long the caller was descheduled between its clock reading and the
// library's; the mutant that measures validity from the last reply still fails it.
func (r *Recorder) Bound(owner string, called, from, until time.Time, ttl, drift time.Duration) {
	if from.Before(called) {
		r.Violate(KindBound, "%s: the round that set the deadline started %v before the call", owner, called.Sub(from))
		return
	}
	limit := from.Add(ttl - drift + BoundSlack)
	if until.After(limit) {
		r.Violate(KindBound, "%s: validity ends %v after the round's start + ttl - drift (ttl %v, drift %v)", owner, until.Sub(limit)+BoundSlack, ttl, drift)
	}
}

// Failure checks that a failed call returned a typed error naming the masters
// (typed is the caller's errors.As verdict).
func (r *Recorder) Failure(owner, op string, err error, typed bool) {
	if err == nil {
		return
	}
	r.Event("%s %s failed: %v", owner, op, err)
	if !typed {
		r.Violate(KindUntyped, "%s %s: %T %v", owner, op, err, err)
	}
}

// Keys checks one master's lock keys: ttl maps each key to its PTTL (negative =
// no TTL). With quiescent, any key at all is a leftover.
func (r *Recorder) Keys(master string, pttl map[string]time.Duration, quiescent bool) {
	keys := make([]string, 0, len(pttl))
	for k := range pttl {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if pttl[k] < 0 {
			r.Violate(KindNoTTL, "master %s: key %s has no TTL", master, k)
		}
		if quiescent {
			r.Violate(KindLeftover, "master %s: key %s left after release and quiescence (PTTL %v)", master, k, pttl[k])
		}
	}
}

// Foreign checks that a call with a foreign token left a key as it was.
func (r *Recorder) Foreign(master, key, before, after string) {
	if before != after {
		r.Violate(KindForeign, "master %s: key %s changed by a foreign token (%q -> %q)", master, key, redact(before), redact(after))
	}
}

// redact keeps only a prefix of a value: other owners' tokens are secrets.
func redact(v string) string {
	if len(v) <= 8 {
		return strings.Repeat("*", len(v))
	}
	return v[:8] + "…"
}

// Intervals returns each hold as one interval (one per name of a multi-name
// hold), from its acquisition's return to the moment its holder saw Done or
// called Release, whichever came first. A hold with neither (still held when the
// history ended) ends at its last deadline.
func (r *Recorder) Intervals() []Interval { return r.intervals(func(*Hold) bool { return true }) }

// intervals returns the intervals of the holds keep selects.
func (r *Recorder) intervals(keep func(*Hold) bool) []Interval {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Interval
	now := r.ms(time.Now())
	for _, h := range r.holds {
		if !keep(h) {
			continue
		}
		if len(h.Pieces) == 0 {
			continue
		}
		from := h.Pieces[0].From
		to := h.Pieces[len(h.Pieces)-1].Until
		for _, p := range h.Pieces {
			to = max(to, p.Until)
		}
		// A Done seen late because this process was stalled (measured as lateDone
		// measures it) ends the hold where the stall began to delay it: the clients
		// share the process, so one that acquired once the stall ended may have been
		// scheduled before the expired holder's Done. What no stall explains stays.
		var done float64
		if h.DoneAt != nil {
			done = *h.DoneAt - float64(r.stallBeforeDone(h, now))/float64(time.Millisecond)
		}
		switch {
		case h.ReleasedAt != nil && h.DoneAt != nil:
			to = min(*h.ReleasedAt, done)
		case h.ReleasedAt != nil:
			to = *h.ReleasedAt
		case h.DoneAt != nil:
			to = done
		}
		if to > from {
			for _, lock := range h.locks() {
				out = append(out, Interval{Owner: h.Owner, Lock: lock, From: from, To: to})
			}
		}
	}
	return out
}

// Overlaps returns every pair of intervals of different owners on the same lock
// that overlap, as violations.
func Overlaps(iv []Interval) []Violation {
	sorted := append([]Interval(nil), iv...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].From < sorted[j].From })
	var out []Violation
	for i, a := range sorted {
		for _, b := range sorted[i+1:] {
			if b.From >= a.To {
				// Later intervals start later still, but a longer one may follow:
				// keep scanning only while b could overlap a.
				break
			}
			if a.Lock == b.Lock && a.Owner != b.Owner {
				out = append(out, Violation{Kind: KindOverlap, Detail: fmt.Sprintf("lock %s: %s [%.1f, %.1f] ms and %s [%.1f, %.1f] ms overlap by %.1f ms",
					a.Lock, a.Owner, a.From, a.To, b.Owner, b.From, b.To, min(a.To, b.To)-b.From)})
			}
		}
	}
	return out
}

// Violations returns every violation: the overlaps of the history and those
// recorded by the checks.
func (r *Recorder) Violations() []Violation {
	out := r.primitiveViolations()
	r.mu.Lock()
	defer r.mu.Unlock()
	out = append(out, r.lateDone()...)
	return append(out, r.violations...)
}

// Holds returns the number of recorded acquisitions.
func (r *Recorder) Holds() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.holds)
}
