package quorum

import (
	"context"
	"strconv"
)

// HeldAs is how a name is held now, as one read tells: by which kind of hold,
// and for a semaphore the permit count its holders' values declare.
type HeldAs struct {
	// Kind is the primitive holding the name ("" when none holds it on a
	// quorum): KindLock, KindMulti or KindShared for the key NAME,
	// KindSemaphore for its permit slots.
	Kind PrimitiveKind
	// Permits is a semaphore's permit count as its holders store it (the
	// largest seen), Held how many of its permits are held on a quorum.
	Permits, Held int
}

// readHeldAs is admin.Admin.ReadHeldAs, which documents it.
func (m *Manager) readHeldAs(ctx context.Context, name string, slots int) (HeldAs, error) {
	names := []string{name}
	for i := range min(slots, MaxPermits) {
		names = append(names, name+permitInfix+strconv.Itoa(i))
	}
	lst, err := m.describe(ctx, names)
	if lst == nil {
		return HeldAs{}, err
	}
	var out HeldAs
	for i := range lst.Locks {
		li := &lst.Locks[i]
		kind, _, ok := li.PrimitiveOf()
		if !ok {
			continue
		}
		switch {
		case kind == KindSemaphore:
			if li.Owner.Primitive() == KindSemaphore {
				out.Permits = max(out.Permits, li.Owner.Count)
			}
			if li.State == StateHeld {
				out.Held++
				out.Kind = KindSemaphore
			}
		case li.State == StateHeld || kind == KindShared && li.State == StatePartial:
			return HeldAs{Kind: kind}, err
		}
	}
	if out.Kind == "" && out.Permits > 0 {
		out.Kind = KindSemaphore // permits on fewer than a quorum: still its limit
	}
	return out, err
}
