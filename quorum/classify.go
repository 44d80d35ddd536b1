package quorum

import (
	"cmp"
	"slices"
	"time"
)

// classify fills State, Votes, Value, Owner, Library and Validity from li.Masters.
//
//   - held: one value on a quorum of masters with validity left;
//   - contested: several string values, none held;
//   - partial: one value on fewer than a quorum, whose keys still expire by themselves;
//   - orphaned: only keys of another type (a Redisson hash), keys without a TTL that
//     no quorum holds, or a value whose validity is gone.
func (m *Manager) classify(li *LockInfo) {
	// The values and their PTTLs, per value: a slice, as there are few masters.
	// Values read truncated (MasterView.Truncated) are told apart by their length too.
	type group struct {
		value string
		size  int64
		pttls []time.Duration
	}
	var counts []group
	wrongType := ""
	for _, mv := range li.Masters {
		switch {
		case !mv.Present:
		case mv.Type == "string":
			i := slices.IndexFunc(counts, func(g group) bool { return g.value == mv.Value && g.size == mv.Size })
			if i < 0 {
				counts = append(counts, group{value: mv.Value, size: mv.Size})
				i = len(counts) - 1
			}
			counts[i].pttls = append(counts[i].pttls, mv.PTTL)
		default:
			wrongType = mv.Type
		}
	}
	if len(counts) == 0 {
		li.State = StateOrphaned
		li.Library = "unknown"
		if wrongType == "hash" {
			li.Library = "redisson"
		}
		return
	}
	// The leading value: most masters, then the longest quorum view, then by value
	// so the choice is stable.
	best := 0
	for i, g := range counts[1:] {
		b := counts[best]
		if len(g.pttls) > len(b.pttls) ||
			len(g.pttls) == len(b.pttls) && (longest(g.pttls) > longest(b.pttls) || longest(g.pttls) == longest(b.pttls) && g.value < b.value) {
			best = i + 1
		}
	}
	lead, pttls := counts[best].value, counts[best].pttls
	li.Value, li.Votes = lead, len(pttls)
	if v, err := ParseValue(lead); err == nil {
		owner := v.Owner
		li.Owner, li.Library = &owner, "redlock"
	} else {
		li.Library = Library(lead)
	}
	// Sort descending, -1 (no TTL) first: it outlives every other.
	slices.SortFunc(pttls, func(a, b time.Duration) int {
		return cmp.Compare(ttlRank(b), ttlRank(a))
	})
	if li.Votes >= m.quorum {
		q := pttls[m.quorum-1]
		if q < 0 {
			li.Validity = NoExpiry
		} else {
			li.Validity = q - m.cfg.drift(q)
		}
	}
	switch {
	case li.Votes >= m.quorum && li.Validity > 0:
		li.State = StateHeld
	case wrongType != "" || li.Votes >= m.quorum:
		li.State = StateOrphaned
	case len(counts) > 1:
		li.State = StateContested
	case pttls[0] < 0 || pttls[0]-m.cfg.drift(pttls[0]) <= 0:
		li.State = StateOrphaned
	default:
		li.State = StatePartial
	}
	if li.State != StateHeld && li.Validity > 0 {
		li.Validity = 0
	}
}

// ttlRank orders PTTLs with "no TTL" above every finite one.
func ttlRank(d time.Duration) time.Duration {
	if d < 0 {
		return NoExpiry
	}
	return d
}

func longest(p []time.Duration) time.Duration {
	var best time.Duration
	for _, d := range p {
		best = max(best, ttlRank(d))
	}
	return best
}
