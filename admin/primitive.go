package admin

import (
	"github.com/redlock/redlock/internal/keyspace"
	"github.com/redlock/redlock/quorum"
)

// PrimitiveKind is which primitive holds a name or wrote a value: Primitive.Kind,
// PrimitiveOf, OwnerPrimitive.
type PrimitiveKind string

// Kinds of primitives.
const (
	KindLock      PrimitiveKind = keyspace.PrimLock      // a plain lock (or a foreign library's, or a leftover)
	KindMulti     PrimitiveKind = keyspace.PrimMulti     // a multi-name hold: several names under one token
	KindSemaphore PrimitiveKind = keyspace.PrimSemaphore // the permits of a semaphore
	KindShared    PrimitiveKind = keyspace.PrimShared    // the shared holders of a name
	KindLeader    PrimitiveKind = keyspace.PrimLeader    // an election's leadership
)

// OwnerPrimitive says which primitive wrote a value with owner o, from its Kind:
// KindSemaphore, KindMulti, KindShared or KindLeader, else KindLock (a plain
// lock, a value of another library, or a nil o). It is the one reading of
// quorum.Owner.Kind: a key's own name says more (PrimitiveOf reads both).
func OwnerPrimitive(o *quorum.Owner) PrimitiveKind {
	if o == nil {
		return KindLock
	}
	return PrimitiveKind(keyspace.Primitive(o.Kind))
}
