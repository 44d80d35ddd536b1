package quorum

import (
	"cmp"
	"slices"
	"time"

	"github.com/redlock/redlock/internal/keyspace"
)

// classify fills State, Votes, Value, Owner, Library and Validity from li.Masters.
//
//   - held: one value on a quorum of masters with validity left;
//   - contested: several string values, none held;
//   - partial: one value on fewer than a quorum, whose keys still expire by themselves;
//   - orphaned: only keys of another type (a Redisson hash), keys without a TTL that
//     no quorum holds, or a value whose validity is gone;
//   - revoked: the leading value is a revocation's tombstone, until FreeAt.
func (m *Manager) classify(li *lockInfo) { m.classifyInto(li, nil, nil) }

// classifyInto is classify, writing the owner into *owner when it is not nil
// (a listing that reuses one), else into a new Owner, its strings taken from in
// when they are there. It allocates nothing else for up to 16 masters.
func (m *Manager) classifyInto(li *lockInfo, owner *Owner, in *interned) {
	// The values, per value: a slice on the stack, as there are few masters.
	var gbuf [16]valueGroup
	var ibuf [16]int
	counts, of, wrongType := groupValues(li.Masters, gbuf[:0], ibuf[:0])
	if len(counts) == 0 {
		m.classifyOther(li, wrongType)
		return
	}
	best := leadingGroup(counts)
	var pbuf [16]time.Duration
	pttls := pbuf[:0]
	for i, g := range of {
		if g == best {
			pttls = append(pttls, li.Masters[i].PTTL)
		}
	}
	lead := counts[best].value
	li.Value, li.Votes = lead, len(pttls)
	if keyspace.IsTombstone(lead) {
		// A revocation's lock-delay: nobody holds it, nobody can take it until
		// the longest of its tombstones ends.
		li.Owner, li.Library, li.State, li.Validity = nil, "redlock", stateRevoked, 0
		li.FreeAt = li.ObservedAt.Add(max(0, slices.Max(pttls)))
		return
	}
	var o Owner
	if err := parseValueOwnerIn(lead, &o, in); err == nil {
		if owner == nil {
			owner = new(Owner)
		}
		*owner = o
		li.Owner, li.Library = owner, "redlock"
	} else {
		li.Owner, li.Library = nil, library(lead)
	}
	m.classifyLead(li, pttls, wrongType, len(counts) > 1)
}

// valueGroup is the masters that hold one string value. Values read truncated
// (masterView.Truncated) are told apart by their length too.
type valueGroup struct {
	value   string
	size    int64
	votes   int
	longest time.Duration // the longest PTTL, ranked by ttlRank
}

// groupValues groups masters by the string value they hold, appending to counts;
// of[i] is the group of masters[i], -1 for none. wrongType is the type of a key
// of another type, when one was read.
func groupValues(masters []masterView, counts []valueGroup, of []int) (_ []valueGroup, _ []int, wrongType string) {
	for _, mv := range masters {
		g := -1
		switch {
		case !mv.Present:
		case mv.Type == "string":
			for i := range counts {
				if counts[i].value == mv.Value && counts[i].size == mv.Size {
					g = i
					break
				}
			}
			if g < 0 {
				counts = append(counts, valueGroup{value: mv.Value, size: mv.Size})
				g = len(counts) - 1
			}
			counts[g].votes++
			counts[g].longest = max(counts[g].longest, ttlRank(mv.PTTL))
		default:
			wrongType = mv.Type
		}
		of = append(of, g)
	}
	return counts, of, wrongType
}

// leadingGroup returns the leading value's group: most masters, then the longest
// quorum view, then by value so the choice is stable.
func leadingGroup(counts []valueGroup) int {
	best := 0
	for i, g := range counts[1:] {
		b := counts[best]
		if g.votes > b.votes || g.votes == b.votes && (g.longest > b.longest || g.longest == b.longest && g.value < b.value) {
			best = i + 1
		}
	}
	return best
}

// classifyLead sets li's Validity and State from the PTTLs of the leading value's
// masters (sorted here), the type of a key of another type (wrongType, "" for
// none), and whether other values were read (contested).
func (m *Manager) classifyLead(li *lockInfo, pttls []time.Duration, wrongType string, contested bool) {
	// Sort descending, -1 (no TTL) first: it outlives every other.
	slices.SortFunc(pttls, func(a, b time.Duration) int {
		return cmp.Compare(ttlRank(b), ttlRank(a))
	})
	if li.Votes >= m.quorum {
		q := pttls[m.quorum-1]
		if q < 0 {
			li.Validity = noExpiry
		} else {
			li.Validity = q - m.cfg.drift(q)
		}
	}
	switch {
	case li.Votes >= m.quorum && li.Validity > 0:
		li.State = stateHeld
	case wrongType != "" || li.Votes >= m.quorum:
		li.State = stateOrphaned
	case contested:
		li.State = stateContested
	case pttls[0] < 0 || pttls[0]-m.cfg.drift(pttls[0]) <= 0:
		li.State = stateOrphaned
	default:
		li.State = statePartial
	}
	if li.State != stateHeld && li.Validity > 0 {
		li.Validity = 0
	}
}

// classifyOther classifies a key of another type than a string: a name's
// shared holders (a sorted set at NAME) and an election's record (a hash at
// NAME:leader:term) are this package's own (Library "redlock"); any other is a
// foreign library's leftover, orphaned. A shared key's State says where the key
// lives, as a string lock's would: held where a quorum has it with validity left
// (its TTL is its latest holder's expiry), partial on fewer masters; which
// holders hold it is read by admin.Admin.Primitives. An election's record has no TTL and is
// no lock: it is never orphaned (stateHeld where a quorum has it, else partial).
func (m *Manager) classifyOther(li *lockInfo, typ string) {
	li.State, li.Library, li.Value, li.Votes, li.Owner, li.Validity = stateOrphaned, "unknown", "", 0, nil, 0
	kc := keyspace.ClassifyKey(li.Name, typ)
	switch {
	case typ == "zset" && kc.Kind == keyspace.KeyShared, kc.Kind == keyspace.KeyTerm && typ == "hash":
		li.Library = "redlock"
	case typ == "hash":
		li.Library = "redisson"
		return
	default:
		return
	}
	var pbuf [16]time.Duration
	pttls := pbuf[:0]
	for _, mv := range li.Masters {
		if mv.Present && mv.Type == typ {
			pttls = append(pttls, mv.PTTL)
		}
	}
	li.Votes = len(pttls)
	slices.SortFunc(pttls, func(a, b time.Duration) int { return cmp.Compare(ttlRank(b), ttlRank(a)) })
	if li.Votes >= m.quorum {
		if q := pttls[m.quorum-1]; q < 0 {
			li.Validity = noExpiry
		} else {
			li.Validity = max(0, q-m.cfg.drift(q))
		}
	}
	switch {
	case kc.Kind == keyspace.KeyTerm && li.Votes >= m.quorum:
		li.State = stateHeld
	case kc.Kind == keyspace.KeyTerm:
		li.State = statePartial
	case li.Validity > 0 && li.Validity != noExpiry:
		li.State = stateHeld
	case len(pttls) > 0 && pttls[0] > 0 && pttls[0]-m.cfg.drift(pttls[0]) > 0 && li.Votes < m.quorum:
		li.State = statePartial
	}
	if li.State != stateHeld {
		li.Validity = 0
	}
}

// ttlRank orders PTTLs with "no TTL" above every finite one.
func ttlRank(d time.Duration) time.Duration {
	if d < 0 {
		return noExpiry
	}
	return d
}
