package quorum

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redlock/redlock/internal/keyspace"
)

// A listing seen as primitives: what `locks`, `watch`, the console, the exporter
// and `events` show. Inspect lists keys; Primitives groups them into what wrote
// them (ClassifyKey and the values' owner part): a multi-name hold's names under
// one token, a semaphore's permits k/N, a name's shared holders, an election's
// leader with its value and term. It describes, it does not guarantee: every
// primitive may have changed by the time it is read.

// PrimitiveKind is what a Primitive is.
type PrimitiveKind string

// Kinds of primitives.
const (
	KindLock      PrimitiveKind = "lock"      // a plain lock (or a foreign library's, or a leftover)
	KindMulti     PrimitiveKind = "multi"     // a multi-name hold: several names under one token
	KindSemaphore PrimitiveKind = "semaphore" // the permits of a semaphore
	KindShared    PrimitiveKind = "shared"    // the shared holders of a name
	KindLeader    PrimitiveKind = "leader"    // an election's leadership
)

// Primitive is one primitive of a listing.
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
	// (the largest seen); Held how many permits (semaphore) or holders (shared)
	// are held on a quorum with validity left.
	Permits, Held int
	// Holders are a shared key's holders, longest validity first.
	Holders []SharedHolder
	// Leader is an election's leader as a quorum reads it; nil when nobody leads
	// (LeaderErr says why).
	Leader    *LeaderInfo
	LeaderErr error
	// ExclusiveWaiting: an exclusive waiter keeps new shared holders out.
	ExclusiveWaiting bool
}

// SharedHolder is one holder of a shared key.
type SharedHolder struct {
	// Value is the holder's value: a secret of its owner (show Redact(Value)).
	Value string
	Owner *Owner
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

// primitives is admin.Admin.Primitives, which documents it.
func (m *Manager) primitives(ctx context.Context, lst *Listing) ([]Primitive, error) {
	var out []Primitive
	byGroup := map[string]int{} // kind + group -> index in out
	waiting := map[string]bool{}
	for i := range lst.Locks {
		li := &lst.Locks[i]
		kind, group, ok := li.PrimitiveOf()
		if !ok { // a leader's record, counters, queues: part of their primitive
			if kc := li.Class(); kc.Kind == KeyWriterWaiting {
				waiting[kc.Name] = true
			}
			continue
		}
		k := string(kind) + "\x00" + group
		j, seen := byGroup[k]
		if !seen || kind == KindLock {
			name := group
			if kind == KindMulti {
				name = ""
			}
			out = append(out, Primitive{Kind: kind, Name: name})
			j = len(out) - 1
			byGroup[k] = j
		}
		p := &out[j]
		p.Locks = append(p.Locks, li)
		switch kind {
		case KindSemaphore:
			if li.Owner.Primitive() == KindSemaphore {
				p.Permits = max(p.Permits, li.Owner.Count)
			}
			if li.State == StateHeld {
				p.Held++
			}
		case KindMulti:
			p.Names = append(p.Names, li.Name)
		}
	}
	var errs []error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range out {
		p := &out[i]
		switch p.Kind {
		case KindMulti:
			slices.Sort(p.Names)
			p.Name = strings.Join(p.Names, " ")
		case KindShared:
			p.ExclusiveWaiting = waiting[p.Name]
			wg.Add(1)
			go func() {
				defer wg.Done()
				holders, err := m.sharedHolders(ctx, m.Key(p.Name), lst.ObservedAt)
				p.Holders = holders
				for _, h := range holders {
					if h.Validity > 0 {
						p.Held++
					}
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}()
		case KindLeader:
			wg.Add(1)
			go func() {
				defer wg.Done()
				e, err := m.Election(p.Name)
				if err == nil {
					p.Leader, err = e.Leader(ctx)
				}
				p.LeaderErr = err
				if err != nil && !errors.Is(err, ErrNoLeader) {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	slices.SortStableFunc(out, func(a, b Primitive) int { return cmp.Compare(a.Name, b.Name) })
	return out, errors.Join(errs...)
}

// KeyType is the Redis type of a listed key as the first master that has it
// reports it ("string", "zset", "hash", ...; "" when no master has it).
func (li *LockInfo) KeyType() string {
	for _, mv := range li.Masters {
		if mv.Present && mv.Type != "" {
			return mv.Type
		}
	}
	return ""
}

// sharedHolders reads the members of a shared key on every master: each
// holder's votes and quorum validity at observed (its expiry score against the
// master's own clock, minus the drift budget), the masters' clocks read in the
// same call. A master's clock is read after the read started (sent), so the
// expiry is at least sent + what it showed left: at observed, before sent, that
// much and sent - observed more is left.
func (m *Manager) sharedHolders(ctx context.Context, key string, observed time.Time) ([]SharedHolder, error) {
	remaining := make([]map[string]time.Duration, len(m.nodes))
	sent := time.Now()
	rep := m.fanout(ctx, "shared-read", key, func(ctx context.Context, n *node) (Outcome, error) {
		var tm *redis.TimeCmd
		var zr *redis.ZSliceCmd
		_, err := n.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			tm = p.Time(ctx)
			zr = p.ZRangeWithScores(ctx, key, 0, -1)
			return nil
		})
		if err != nil && !errors.Is(err, redis.Nil) {
			return OutcomeError, err
		}
		now := tm.Val().UnixMilli()
		left := map[string]time.Duration{}
		for _, z := range zr.Val() {
			if ms := int64(z.Score) - now; ms > 0 {
				left[z.Member.(string)] = time.Duration(ms) * time.Millisecond
			}
		}
		remaining[m.nodeIndex(n)] = left
		return OutcomeOK, nil
	})
	byValue := map[string][]time.Duration{}
	on := map[string][]string{}
	for i, left := range remaining {
		for v, d := range left {
			byValue[v] = append(byValue[v], d)
			on[v] = append(on[v], m.nodes[i].name)
		}
	}
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
		if len(ds) >= m.quorum {
			slices.SortFunc(ds, func(a, b time.Duration) int { return cmp.Compare(b, a) })
			q := ds[m.quorum-1] + sent.Sub(observed)
			h.Validity = max(0, q-m.cfg.drift(q))
		}
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b SharedHolder) int {
		return cmp.Or(cmp.Compare(b.Validity, a.Validity), cmp.Compare(b.Votes, a.Votes), cmp.Compare(a.Value, b.Value))
	})
	if rep.count(OutcomeOK) < m.quorum {
		return out, m.roundError(rep)
	}
	return out, nil
}
