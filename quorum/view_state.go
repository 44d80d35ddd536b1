package quorum

// Which primitive wrote a value, and which one a Lock holds. Package admin
// groups a listing's keys into primitives (admin.Primitives) from these and from
// the keys' names.

// PrimitiveKind is which primitive holds a name or wrote a value: Lock.Kind,
// Owner.Primitive.
type PrimitiveKind string

// Kinds of primitives.
const (
	KindLock      PrimitiveKind = "lock"      // a plain lock (or a foreign library's, or a leftover)
	KindMulti     PrimitiveKind = "multi"     // a multi-name hold: several names under one token
	KindSemaphore PrimitiveKind = "semaphore" // the permits of a semaphore
	KindShared    PrimitiveKind = "shared"    // the shared holders of a name
	KindLeader    PrimitiveKind = "leader"    // an election's leadership
)

// Primitive says which primitive wrote a value with owner o, from its Kind:
// KindSemaphore, KindMulti, KindShared or KindLeader, else KindLock (a plain
// lock, a value of another library, or a nil o). It is the one reading of
// Owner.Kind: a key's own name says more (admin.PrimitiveOf reads both).
func (o *Owner) Primitive() PrimitiveKind {
	if o == nil {
		return KindLock
	}
	switch o.Kind {
	case ownerSem:
		return KindSemaphore
	case ownerMulti:
		return KindMulti
	case ownerShared:
		return KindShared
	case ownerLeader:
		return KindLeader
	}
	return KindLock
}
