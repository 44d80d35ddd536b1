package keyspace

// The primitives' tags in a lock value's Owner.Kind: the quorum package writes
// them; a plain lock's owner has none.
const (
	OwnerSemaphore = "sem"
	OwnerMulti     = "multi"
	OwnerShared    = "shared"
	OwnerLeader    = "leader"
)

// The primitives' names, as admin.PrimitiveKind spells them.
const (
	PrimLock      = "lock"      // a plain lock (or a foreign library's, or a leftover)
	PrimMulti     = "multi"     // a multi-name hold: several names under one token
	PrimSemaphore = "semaphore" // the permits of a semaphore
	PrimShared    = "shared"    // the shared holders of a name
	PrimLeader    = "leader"    // an election's leadership
)

// Primitive names the primitive that wrote a value whose owner's Kind is
// ownerKind: PrimSemaphore, PrimMulti, PrimShared or PrimLeader, else PrimLock
// (a plain lock, or a value of another library).
func Primitive(ownerKind string) string {
	switch ownerKind {
	case OwnerSemaphore:
		return PrimSemaphore
	case OwnerMulti:
		return PrimMulti
	case OwnerShared:
		return PrimShared
	case OwnerLeader:
		return PrimLeader
	}
	return PrimLock
}
