package cli

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/quorum"
)

// The coordination primitives on acquire and run: several names (all or none,
// one token), -permits N (a semaphore) and -shared (a shared hold). SAFETY.md's
// Coordination primitives section has the contracts, docs/commands.md the flags;
// quorum has the algorithms.

// primNote explains several names, for acquire and run.
const primNote = `Several names (NAME NAME...) are taken all or none, atomically on each master,
under one token; extend and release cover them all. Overlapping sets taken in
any order never deadlock. -permits and -shared take one NAME. A multi-name or
shared hold cannot be fair or fenced: a lock policy asking for either is an error.`

// primArgs are the primitive flags of acquire and run.
type primArgs struct {
	permits int
	shared  bool
	pf      *Flags
}

func (p *primArgs) flags(f *Flags) {
	p.pf = f
	f.Int(&p.permits, "permits", "N", 0, `take one of N permits of NAME (a semaphore: at most N holders at
once; every client of NAME must give the same N). Default: the lock
policy's permits, else a plain lock. 1 to 1024`)
	f.Bool(&p.shared, "shared", `take a shared hold of NAME: any number of shared holders, or one
exclusive holder (a plain lock of NAME, this tool's or another
Redlock client's SET NX); an exclusive waiter is not starved by a
stream of shared holders`)
}

// namesArgs are the arguments of a command on one or several lock names.
type namesArgs struct {
	common
	names []string
}

// parse takes one or more NAMEs ("--" ends the flags: what follows are NAMEs).
func (a *namesArgs) parse(p *parsed) error {
	names, err := checkLockNames(append(p.pos, p.rest...), true)
	if err != nil {
		return err
	}
	a.names = names
	return a.check()
}

// lockKind is what acquire or run takes: a plain lock, several names, a permit
// of a semaphore, or a shared hold.
type lockKind struct {
	names   []string
	permits int // > 0: a semaphore of that many permits
	shared  bool
}

// multi reports whether several names are taken at once.
func (k lockKind) multi() bool { return len(k.names) > 1 }

// kind is the primitive k takes, named as quorum names every hold's kind.
func (k lockKind) kind() admin.PrimitiveKind {
	switch {
	case k.multi():
		return admin.KindMulti
	case k.permits > 0:
		return admin.KindSemaphore
	case k.shared:
		return admin.KindShared
	}
	return admin.KindLock
}

// sorted returns k's names in sorted order, as a multi-name hold keeps them.
func (k lockKind) sorted() []string { return slices.Sorted(slices.Values(k.names)) }

// byKey reports whether k is held in the key NAME itself (a plain lock, shared
// holders), whose holders heldBy names.
func (k lockKind) byKey() bool {
	kind := k.kind()
	return kind == admin.KindLock || kind == admin.KindShared
}

// what names the hold for messages: "a", "a, b and c", "a (one of 3 permits)",
// "a (shared)"; raw (the printer escapes it).
func (k lockKind) what() string {
	names := k.names
	s := names[0]
	if len(names) > 1 {
		s = strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
	}
	switch k.kind() {
	case admin.KindSemaphore:
		s += fmt.Sprintf(" (one of %d permits)", k.permits)
	case admin.KindShared:
		s += " (shared)"
	}
	return s
}

// checkLockNames checks NAMEs: each a valid lock name, none twice; several only
// when many.
func checkLockNames(pos []string, many bool) ([]string, error) {
	if !many || len(pos) == 0 {
		if err := oneName(pos, quorum.ValidateName); err != nil {
			return nil, err
		}
	}
	seen := map[string]bool{}
	for _, n := range pos {
		if err := quorum.ValidateName(n); err != nil {
			return nil, usagef("lock NAME %s: %v", n, err)
		}
		if seen[n] {
			return nil, usagef("lock NAME %s given twice", n)
		}
		seen[n] = true
	}
	return pos, nil
}

// kind checks the primitive flags against the names and the lock policies, and
// returns what to take; a bad combination is a usage error.
func (p *primArgs) kind(s *lockSession, names []string) (lockKind, error) {
	k := lockKind{names: names, shared: p.shared}
	permitsGiven := p.pf.given("permits")
	switch {
	case permitsGiven && (p.permits < 1 || p.permits > quorum.MaxPermits):
		return k, usagef("-permits must be in 1..%d, got %d", quorum.MaxPermits, p.permits)
	case permitsGiven && p.shared:
		return k, usagef("-permits and -shared do not go together: a semaphore's holders are all alike")
	case permitsGiven && len(names) > 1:
		return k, usagef("-permits takes one NAME, got %d", len(names))
	case p.shared && len(names) > 1:
		return k, usagef("-shared takes one NAME, got %d", len(names))
	}
	if permitsGiven {
		k.permits = p.permits
	} else if len(names) == 1 {
		k.permits = s.cluster.PolicyFor(names[0]).Permits
	}
	if k.permits > 0 && k.shared {
		return k, usagef("-shared: the lock policy %q makes %s a semaphore of %d permits", s.cluster.PolicyFor(names[0]).Match, names[0], k.permits)
	}
	if k.shared || k.multi() {
		what := "-shared"
		if k.multi() {
			what = "several names"
		}
		for _, n := range names {
			pol := s.cluster.PolicyFor(n)
			switch {
			case pol.Permits > 0 && k.multi():
				return k, usagef("%s: the lock policy %q makes %s a semaphore of %d permits, which a multi-name hold cannot take", what, pol.Match, n, pol.Permits)
			case pol.Fencing || pol.Fair:
				return k, usagef("%s: the lock policy %q of %s asks for %s, which %s cannot give", what, pol.Match, n, policyTraits(pol.Fair, pol.Fencing), strings.TrimPrefix(what, "-"))
			}
		}
	}
	return k, nil
}

func policyTraits(fair, fencing bool) string {
	switch {
	case fair && fencing:
		return "fair queueing and fencing"
	case fair:
		return "fair queueing"
	}
	return "fencing"
}

// kindOptions returns the lock options of k: the policy's (fencing, fair; kind
// refused them for a shared or multi-name hold) and the owner label. What k is
// (a semaphore, a shared or multi-name hold) is not an option: takeKind takes it
// through its own quorum type.
func (s *lockSession) kindOptions(k lockKind, owner string) []quorum.LockOption {
	return s.policyOptions(k.names[0], owner)
}

// ttlForAll is ttlFor over several names: the -ttl flag, else the shortest of
// the names' policy TTLs (a multi-name hold has one TTL; the shortest never
// holds a name longer than its policy says).
func (s *lockSession) ttlForAll(names []string, ttl time.Duration, given bool) (time.Duration, error) {
	if given {
		return s.ttlFor(names[0], ttl, true)
	}
	out := time.Duration(0)
	for _, n := range names {
		t := s.cluster.PolicyFor(n).TTL
		if out == 0 || t < out {
			out = t
		}
	}
	return out, nil
}

// maxExtensionsFor is the keep-alive cap over several names: the smallest
// non-zero max_extensions of their policies, 0 when none caps.
func (s *lockSession) maxExtensionsFor(names []string) int {
	out := 0
	for _, n := range names {
		if m := s.cluster.PolicyFor(n).MaxExtensions; m > 0 && (out == 0 || m < out) {
			out = m
		}
	}
	return out
}

// kindEnv is what a command run under a primitive learns besides run's usual
// variables: REDLOCK_NAMES (every name of a multi-name hold, sorted,
// space-separated), REDLOCK_PERMIT and REDLOCK_PERMITS (the slot held and the
// semaphore's count), REDLOCK_SHARED=1 for a shared hold.
func kindEnv(k lockKind, t taken) []string {
	switch k.kind() {
	case admin.KindMulti:
		return []string{"REDLOCK_NAMES=" + strings.Join(k.sorted(), " ")}
	case admin.KindSemaphore:
		return []string{"REDLOCK_PERMIT=" + strconv.Itoa(t.slot), "REDLOCK_PERMITS=" + strconv.Itoa(k.permits)}
	case admin.KindShared:
		return []string{"REDLOCK_SHARED=1"}
	}
	return nil
}
