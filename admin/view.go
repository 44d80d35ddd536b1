package admin

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redlock/redlock/internal/keyspace"
	"github.com/redlock/redlock/quorum"
)

// A listing seen as primitives: what `locks`, `watch`, the console, the exporter
// and `events` show. Inspect lists keys; Primitives groups them into what wrote
// them (ClassifyKey and the values' owner part): a multi-name hold's names under
// one token, a semaphore's permits k/N, a name's shared holders, an election's
// leader with its value and term. It describes, it does not guarantee: every
// primitive may have changed by the time it is read.

// Primitive is one primitive of a listing: a plain lock, a multi-name hold, a
// semaphore, a name's shared holders or an election's leadership.
type Primitive struct {
	Kind PrimitiveKind
	// Name is the lock, semaphore or election name; for a multi-name hold its
	// names joined by spaces.
	Name string
	// Names are a multi-name hold's names, sorted; nil otherwise.
	Names []string
	// Locks are the keys behind it, as Inspect saw them: one per name of a
	// multi-name hold, one per permit slot present, the lock or leadership key,
	// the shared key (its Masters say which masters hold the sorted set).
	Locks []*LockInfo
	// Permits is a semaphore's permit count N as its holders' values declare it
	// (the count most of them declare, from the slots below it; 0 when none
	// does); Held how many permits (semaphore: of its slots 0..N-1, so never
	// more than N) or holders (shared) are held on a quorum with validity left.
	// A permit key of a slot at or above N is no slot of it: it is listed as a
	// key of its own (KindLock, Name the key's name).
	Permits, Held int
	// Holders are a shared key's holders, longest validity first. HoldersErr
	// is set when the read failed, or when some master's members were not read
	// and a holder seen short of a quorum may hold one with them: Held may then
	// count fewer holders than there are.
	Holders    []SharedHolder
	HoldersErr error
	// Leader is an election's leader as a quorum reads it; nil when nobody leads
	// (LeaderErr says why).
	Leader    *quorum.LeaderInfo
	LeaderErr error
	// ExclusiveWaiting: an exclusive waiter keeps new shared holders out.
	ExclusiveWaiting bool
}

// SharedHolder is one holder of a shared key.
type SharedHolder struct {
	// Value is the holder's value: a secret of its owner (show Redact(Value)).
	Value string
	Owner *quorum.Owner
	// Votes is how many masters hold it (Masters names them, in the topology's
	// order); Validity its quorum validity at the listing's ObservedAt (0 unless
	// held on a quorum).
	Votes    int
	Masters  []string
	Validity time.Duration
	// FreeAt is set when Value is a revoked holder's tombstone (IsTombstone,
	// RevokeShared): when the last copy of it ends, as observed; it keeps an
	// exclusive acquirer out until then. It holds nothing (Validity 0, Owner nil).
	FreeAt time.Time
}

// Primitives groups lst into primitives, reading what a listing does not hold:
// the members of shared keys and the leader of each election (one quorum read
// each). Keys that only serve a primitive (a leader's record, an exclusive
// waiter's marker) are folded into it. A read that fails leaves its primitive
// as listed (HoldersErr or LeaderErr set) and the error is returned with the rest.
func (a *Admin) Primitives(ctx context.Context, lst *Listing) ([]Primitive, error) {
	out := group(lst)
	var errs []error
	var mu sync.Mutex
	failed := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for i := range out {
		p := &out[i]
		switch p.Kind {
		case KindShared:
			wg.Go(func() {
				holders, unread, err := a.sharedHolders(ctx, a.m.Key(p.Name), lst.ObservedAt)
				p.Holders, p.HoldersErr = holders, err
				if err == nil && len(unread) > 0 && uncertain(holders, a.m.Quorum(), len(unread)) {
					// A quorum answered, but a holder seen short of a quorum
					// may hold one with the masters that did not answer.
					p.HoldersErr = fmt.Errorf("members not read on %s", strings.Join(unread, ", "))
				}
				for _, h := range holders {
					if h.Validity > 0 {
						p.Held++
					}
				}
				if err != nil {
					failed(err)
				}
			})
		case KindLeader:
			wg.Go(func() {
				// Any name a listing shows, not only those Election takes.
				var err error
				p.Leader, err = a.side.Leader(ctx, p.Name)
				p.LeaderErr = err
				if err != nil && !errors.Is(err, quorum.ErrNoLeader) {
					failed(err)
				}
			})
		}
	}
	wg.Wait()
	slices.SortStableFunc(out, func(a, b Primitive) int { return cmp.Compare(a.Name, b.Name) })
	return out, errors.Join(errs...)
}

// group groups the locks of lst into primitives, from their names, types and
// values alone.
func group(lst *Listing) []Primitive {
	var out []Primitive
	byGroup := map[string]int{} // kind + group -> index in out
	waiting := map[string]bool{}
	for i := range lst.Locks {
		li := &lst.Locks[i]
		kind, grp, ok := PrimitiveOf(li)
		if !ok { // a leader's record, counters, queues: part of their primitive
			if kc := Class(li); kc.Kind == KeyWriterWaiting {
				waiting[kc.Name] = true
			}
			continue
		}
		k := string(kind) + "\x00" + grp
		j, seen := byGroup[k]
		if !seen || kind == KindLock {
			name := grp
			if kind == KindMulti {
				name = ""
			}
			out = append(out, Primitive{Kind: kind, Name: name})
			j = len(out) - 1
			byGroup[k] = j
		}
		p := &out[j]
		p.Locks = append(p.Locks, li)
		if kind == KindMulti {
			p.Names = append(p.Names, li.Name)
		}
	}
	for i := range out {
		p := &out[i]
		switch p.Kind {
		case KindSemaphore:
			for _, li := range settleSemaphore(p) {
				out = append(out, Primitive{Kind: KindLock, Name: li.Name, Locks: []*LockInfo{li}}) // p is not read again: out may have moved
			}
		case KindMulti:
			slices.Sort(p.Names)
			p.Name = strings.Join(p.Names, " ")
		case KindShared:
			p.ExclusiveWaiting = waiting[p.Name]
		}
	}
	return out
}

// uncertain reports whether holders, read with unread masters not answering,
// may count fewer holders than there are: when a holder seen on fewer than q
// masters reaches q with the unread ones. (A holder seen on none would need
// unread >= q, which fails the read itself.)
func uncertain(holders []SharedHolder, q, unread int) bool {
	for _, h := range holders {
		if h.FreeAt.IsZero() && h.Votes < q && h.Votes+unread >= q {
			return true
		}
	}
	return false
}

// sharedHolders reads the members of a shared key on every master: each
// holder's votes and quorum validity at observed (its expiry score against the
// master's own clock, minus the drift budget), the masters' clocks read in the
// same call. A master's clock is read after the read started (sent), so the
// expiry is at least sent + what it showed left: at observed, before sent, that
// much and sent - observed more is left. unread names the masters whose members
// were not read (err is set only when fewer than a quorum answered).
func (a *Admin) sharedHolders(ctx context.Context, key string, observed time.Time) (holders []SharedHolder, unread []string, err error) {
	sent, remaining, err := a.side.SharedMembers(ctx, key)
	masters := a.m.Nodes()
	byValue := map[string][]time.Duration{}
	on := map[string][]string{}
	for i, left := range remaining {
		if left == nil {
			unread = append(unread, masters[i])
		}
		for v, d := range left {
			byValue[v] = append(byValue[v], d)
			on[v] = append(on[v], masters[i])
		}
	}
	q := a.m.Quorum()
	var out []SharedHolder
	for v, ds := range byValue {
		h := SharedHolder{Value: v, Votes: len(ds), Masters: on[v]}
		if keyspace.IsTombstone(v) {
			h.FreeAt = observed.Add(slices.Max(ds))
			out = append(out, h)
			continue
		}
		if pv, err := ParseValue(v); err == nil {
			o := pv.Owner
			h.Owner = &o
		}
		if len(ds) >= q {
			slices.SortFunc(ds, func(a, b time.Duration) int { return cmp.Compare(b, a) })
			left := ds[q-1] + sent.Sub(observed)
			h.Validity = max(0, left-a.m.DriftBudget(left))
		}
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b SharedHolder) int {
		return cmp.Or(cmp.Compare(b.Validity, a.Validity), cmp.Compare(b.Votes, a.Votes), cmp.Compare(a.Value, b.Value))
	})
	return out, unread, err
}
