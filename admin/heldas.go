package admin

import (
	"context"
	"strconv"

	"github.com/redlock/redlock/internal/keyspace"
	"github.com/redlock/redlock/quorum"
)

// HeldAs is how a name is held now, as one read tells: by which kind of hold,
// and for a semaphore the permit count its holders' values declare.
type HeldAs struct {
	// Kind is the primitive holding the name ("" when none holds it on a
	// quorum): KindLock, KindMulti or KindShared for the key NAME,
	// KindSemaphore for its permit slots.
	Kind PrimitiveKind
	// Permits is a semaphore's permit count as its holders store it (the
	// count most of them declare, as Primitive.Permits), Held how many of its
	// permits are held on a quorum, among its slots below Permits when known.
	Permits, Held int
}

// ReadHeldAs reads how name is held now: its key and its first slots permit
// slots (NAME:permit:0 .. slots-1), in one read of each master. It describes,
// it does not lock: a hold taken or released after the read is not seen, and a
// semaphore whose held permits all sit at slot slots or above reads as free.
// Callers use it to refuse an acquisition that cannot be meant (a plain lock on
// a semaphore's name, a semaphore of another permit count) with a clear reason.
func (a *Admin) ReadHeldAs(ctx context.Context, name string, slots int) (HeldAs, error) {
	names := []string{name}
	for i := range min(slots, quorum.MaxPermits) {
		names = append(names, name+keyspace.PermitInfix+strconv.Itoa(i))
	}
	lst, err := a.Describe(ctx, names)
	if lst == nil {
		return HeldAs{}, err
	}
	sem := Primitive{Kind: KindSemaphore, Name: name}
	for i := range lst.Locks {
		li := &lst.Locks[i]
		kind, _, ok := PrimitiveOf(li)
		if !ok {
			continue
		}
		switch {
		case kind == KindSemaphore:
			sem.Locks = append(sem.Locks, li)
		case li.State == StateHeld || kind == KindShared && li.State == StatePartial:
			return HeldAs{Kind: kind}, err
		}
	}
	// The limit its values declare, and the permits held among its own slots
	// (a forged slot or limit is counted as Primitives counts it).
	settleSemaphore(&sem)
	out := HeldAs{Permits: sem.Permits, Held: sem.Held}
	if out.Held > 0 || out.Permits > 0 {
		out.Kind = KindSemaphore // permits on fewer than a quorum: still its limit
	}
	return out, err
}

// HeldKind returns the primitive that wrote token, as OwnerPrimitive
// reads its owner (KindLock for a plain lock; "" when token is not a value of
// the lock library), and its count (a semaphore's permits, a multi-name hold's
// number of names). It does no I/O.
func HeldKind(token string) (kind PrimitiveKind, count int) {
	v, err := ParseValue(token)
	if err != nil {
		return "", 0
	}
	return OwnerPrimitive(&v.Owner), v.Owner.Count
}
