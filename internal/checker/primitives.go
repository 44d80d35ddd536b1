package checker

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"
)

// Invariants of the coordination primitives:
//
//   - a semaphore of N permits (Limit) never has more than N holds at once;
//   - shared holds (AcquiredShared) may overlap each other, never a hold that is
//     not shared (an exclusive holder) of the same lock;
//   - a leadership's term (Hold.SetTerm) is given to one hold only, and terms
//     increase with the holds' start: a later leader never has a lower or equal
//     term (mutual exclusion of leaders is the overlap check);
//   - a multi-name hold (AcquiredMulti) holds every one of its names: each is
//     checked for overlaps as a lock of its own, and Partial records a hold that
//     the masters show on some names only.

// More violation kinds, for the primitives.
const (
	KindTooMany = "more-holders-than-permits"
	KindTerm    = "term-not-increasing"
	KindPartial = "not-all-names"
)

// Limit allows n holds of lock at once (a semaphore of n permits); by default a
// lock allows one owner at a time.
func (r *Recorder) Limit(lock string, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.limits == nil {
		r.limits = map[string]int{}
	}
	r.limits[lock] = n
}

// AcquiredShared records a shared hold of lock: it may overlap other shared holds,
// never an exclusive one.
func (r *Recorder) AcquiredShared(owner, lock string, returned, until time.Time) *Hold {
	h := r.Acquired(owner, lock, returned, until)
	r.mu.Lock()
	h.Shared = true
	r.mu.Unlock()
	return h
}

// AcquiredMulti records a hold of every one of locks (a multi-name lock).
func (r *Recorder) AcquiredMulti(owner string, locks []string, returned, until time.Time) *Hold {
	h := r.Acquired(owner, locks[0], returned, until)
	r.mu.Lock()
	h.Locks = slices.Clone(locks)
	r.mu.Unlock()
	return h
}

// SetTerm records the term of a leadership hold.
func (h *Hold) SetTerm(term int64) {
	h.rec.mu.Lock()
	defer h.rec.mu.Unlock()
	h.Term = term
}

// Partial records that a multi-name hold of owner was found, right after it was
// acquired, to hold only got of its names on a quorum of masters.
func (r *Recorder) Partial(owner string, names, got []string) {
	if len(got) < len(names) {
		r.Violate(KindPartial, "%s: acquired %v but a quorum holds only %v", owner, names, got)
	}
}

// primitiveViolations checks the history's holds: exclusive holds of different
// owners never overlap (Overlaps), nor a shared hold and an exclusive one of the
// same lock, a limited lock never has more holds than its limit (Crowds), and
// terms increase (Terms).
func (r *Recorder) primitiveViolations() []Violation {
	r.mu.Lock()
	limits := maps.Clone(r.limits)
	r.mu.Unlock()
	limited := func(h *Hold) bool { return limits[h.Lock] > 1 }
	excl := r.intervals(func(h *Hold) bool { return !h.Shared && !limited(h) })
	shared := r.intervals(func(h *Hold) bool { return h.Shared })
	out := Overlaps(excl)
	out = append(out, SharedOverlaps(shared, excl)...)
	out = append(out, Crowds(r.intervals(limited), limits)...)
	return append(out, Terms(r.termHolds())...)
}

// SharedOverlaps returns every pair of a shared interval and an exclusive one of
// the same lock that overlap, as violations.
func SharedOverlaps(shared, excl []Interval) []Violation {
	var out []Violation
	for _, s := range shared {
		for _, x := range excl {
			if s.Lock == x.Lock && s.From < x.To && x.From < s.To {
				out = append(out, Violation{Kind: KindOverlap, Detail: fmt.Sprintf("lock %s: shared %s [%.1f, %.1f] ms and exclusive %s [%.1f, %.1f] ms overlap by %.1f ms",
					s.Lock, s.Owner, s.From, s.To, x.Owner, x.From, x.To, min(s.To, x.To)-max(s.From, x.From))})
			}
		}
	}
	return out
}

// TermHold is a leadership hold's start and term.
type TermHold struct {
	Owner string
	Lock  string
	From  float64
	Term  int64
}

// termHolds returns the holds with a term.
func (r *Recorder) termHolds() []TermHold {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []TermHold
	for _, h := range r.holds {
		if h.Term != 0 && len(h.Pieces) > 0 {
			out = append(out, TermHold{Owner: h.Owner, Lock: h.Lock, From: h.Pieces[0].From, Term: h.Term})
		}
	}
	return out
}

// locks returns the names a hold covers.
func (h *Hold) locks() []string {
	if len(h.Locks) > 0 {
		return h.Locks
	}
	return []string{h.Lock}
}

// Crowds returns, for each lock with a limit, every moment at which more holds
// than its limit overlap, as violations (one per excess episode).
func Crowds(iv []Interval, limits map[string]int) []Violation {
	type edge struct {
		at    float64
		delta int
		who   string
	}
	byLock := map[string][]edge{}
	for _, x := range iv {
		byLock[x.Lock] = append(byLock[x.Lock], edge{x.From, 1, x.Owner}, edge{x.To, -1, x.Owner})
	}
	var out []Violation
	for _, lock := range slices.Sorted(maps.Keys(byLock)) {
		edges := byLock[lock]
		// Ends before starts at the same instant: [From, To) intervals.
		sort.Slice(edges, func(i, j int) bool {
			if edges[i].at != edges[j].at {
				return edges[i].at < edges[j].at
			}
			return edges[i].delta < edges[j].delta
		})
		n, over := 0, false
		holders := map[string]int{}
		for _, e := range edges {
			n += e.delta
			holders[e.who] += e.delta
			if n > limits[lock] && !over {
				var who []string
				for o, c := range holders {
					for range c {
						who = append(who, o)
					}
				}
				sort.Strings(who)
				out = append(out, Violation{Kind: KindTooMany, Detail: fmt.Sprintf("lock %s: %d holders at %.1f ms (limit %d): %v",
					lock, n, e.at, limits[lock], who)})
			}
			over = n > limits[lock]
		}
	}
	return out
}

// Terms checks the leadership holds (those with a term) of each lock: a term
// belongs to one hold, and a hold that starts later has a greater term.
func Terms(holds []TermHold) []Violation {
	byLock := map[string][]TermHold{}
	for _, x := range holds {
		byLock[x.Lock] = append(byLock[x.Lock], x)
	}
	var out []Violation
	for _, lock := range slices.Sorted(maps.Keys(byLock)) {
		hs := byLock[lock]
		sort.Slice(hs, func(i, j int) bool { return hs[i].From < hs[j].From })
		for i := 1; i < len(hs); i++ {
			a, b := hs[i-1], hs[i]
			if b.Term <= a.Term {
				out = append(out, Violation{Kind: KindTerm, Detail: fmt.Sprintf("election %s: %s took term %d at %.1f ms after %s's term %d at %.1f ms",
					lock, b.Owner, b.Term, b.From, a.Owner, a.Term, a.From)})
			}
		}
	}
	return out
}
