package quorum

import (
	"context"
	"testing"
	"time"

	"github.com/redlock/redlock/internal/keyspace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every kind of hold is named the same way from the type it was taken through,
// from its token and from its value as a listing reads it: the Lock's
// primitive, heldKind and the value's Owner.Kind agree for each kind taken on real
// masters (admin's TestHeldKindReadsTheTokenAsTheLockDoes checks admin.HeldKind).
func TestKindOfAHoldIsReadOneWay(t *testing.T) {
	ctx := context.Background()
	_, m := testCluster(t, 3)
	ttl := 10 * time.Second
	tests := []struct {
		kind string
		take func() (*Lock, error)
	}{
		{keyspace.PrimLock, func() (*Lock, error) { return m.TryAcquire(ctx, "k-plain", ttl) }},
		{keyspace.PrimSemaphore, func() (*Lock, error) {
			sem, err := m.Semaphore("k-sem", 2)
			require.NoError(t, err)
			p, err := sem.TryAcquire(ctx, ttl)
			require.NoError(t, err)
			return p.Lock, nil
		}},
		{keyspace.PrimShared, func() (*Lock, error) {
			sh, err := m.Shared("k-shared")
			require.NoError(t, err)
			return sh.TryAcquire(ctx, ttl)
		}},
		{keyspace.PrimMulti, func() (*Lock, error) { return m.tryMulti(ctx, []string{"k-a", "k-b"}, ttl) }},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			l, err := tt.take()
			require.NoError(t, err)
			t.Cleanup(func() { _ = l.Release(context.Background()) })
			assert.Equal(t, tt.kind, kindOf(l), "the Lock's primitive")
			kind, _ := heldKind(l.Token())
			assert.Equal(t, tt.kind, kind, "heldKind")
			v, err := parseValue(l.Token())
			require.NoError(t, err)
			assert.Equal(t, tt.kind, keyspace.Primitive(v.Owner.Kind), "the value's Owner.Kind")
		})
	}
	assert.Equal(t, keyspace.PrimLock, keyspace.Primitive(""), "no owner kind: a plain lock or another library's value")
	kind, _ := heldKind("not a token")
	assert.Empty(t, kind)
}
