package admin

import (
	"cmp"
	"maps"
	"slices"
)

// A semaphore's keys are read from the masters, where anyone who can write may
// leave a permit key of a slot the semaphore never uses (NAME:permit:7 of a
// semaphore of 2), or a value declaring another limit. A listing counts the
// permits held among the semaphore's own slots only, so that "held/limit" never
// shows more holders than the limit it shows; the other keys are listed as what
// they are: keys of their own.

// settleSemaphore fixes p's limit and the slots counted as held: the limit is
// the permit count that most of its values declare (the smaller on a tie),
// counting only values that sit in a slot below the count they declare; the
// keys of slots at or above that limit leave p and are returned, each to be
// listed as a key of its own. Without any such value (no value declares a
// limit: foreign or forged values only) every key stays and the limit is
// unknown (0).
func settleSemaphore(p *Primitive) (stray []*LockInfo) {
	votes := map[int]int{}
	for _, li := range p.Locks {
		if n := declaredPermits(li); n > 0 && Class(li).Permit < n {
			votes[n]++
		}
	}
	p.Permits, p.Held = 0, 0
	if len(votes) > 0 {
		p.Permits = slices.MaxFunc(slices.Collect(maps.Keys(votes)), func(a, b int) int {
			return cmp.Or(cmp.Compare(votes[a], votes[b]), cmp.Compare(b, a))
		})
	}
	kept := p.Locks[:0:0]
	for _, li := range p.Locks {
		if p.Permits > 0 && Class(li).Permit >= p.Permits {
			stray = append(stray, li)
			continue
		}
		kept = append(kept, li)
		if li.State == StateHeld {
			p.Held++
		}
	}
	p.Locks = kept
	return stray
}

// declaredPermits is the permit count li's value declares: its owner's Count
// when a semaphore wrote it, else 0.
func declaredPermits(li *LockInfo) int {
	if OwnerPrimitive(li.Owner) != KindSemaphore {
		return 0
	}
	return li.Owner.Count
}
