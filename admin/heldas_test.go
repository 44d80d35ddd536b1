package admin_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/quorum"
)

// HeldKind names a token's hold as its Lock does, and ReadHeldAs names the
// name's hold as the masters hold it, for each kind taken on real masters.
func TestHeldKindReadsTheTokenAsTheLockDoes(t *testing.T) {
	ctx := context.Background()
	_, m, adm := testCluster(t, 3)
	ttl := 10 * time.Second
	tests := []struct {
		name string
		kind admin.PrimitiveKind
		take func() (*quorum.Lock, error)
	}{
		{"h-plain", admin.KindLock, func() (*quorum.Lock, error) { return m.TryAcquire(ctx, "h-plain", ttl) }},
		{"h-sem", admin.KindSemaphore, func() (*quorum.Lock, error) {
			sem, err := m.Semaphore("h-sem", 2)
			if err != nil {
				return nil, err
			}
			p, err := sem.TryAcquire(ctx, ttl)
			if err != nil {
				return nil, err
			}
			return p.Lock, nil
		}},
		{"h-shared", admin.KindShared, func() (*quorum.Lock, error) {
			sh, err := m.Shared("h-shared")
			if err != nil {
				return nil, err
			}
			return sh.TryAcquire(ctx, ttl)
		}},
		{"h-a", admin.KindMulti, func() (*quorum.Lock, error) {
			mu, err := m.Multi("h-a", "h-b")
			if err != nil {
				return nil, err
			}
			return mu.TryAcquire(ctx, ttl)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := tt.take()
			require.NoError(t, err)
			t.Cleanup(func() { _ = l.Release(context.Background()) })
			kind, count := admin.HeldKind(l.Token())
			assert.Equal(t, tt.kind, kind)
			v, err := admin.ParseValue(l.Token())
			require.NoError(t, err)
			assert.Equal(t, tt.kind, admin.OwnerPrimitive(&v.Owner), "the value's owner")
			if kind == admin.KindSemaphore {
				assert.Equal(t, 2, count, "the permit count the token carries")
			}
			ha, err := adm.ReadHeldAs(ctx, tt.name, 4)
			require.NoError(t, err)
			assert.Equal(t, tt.kind, ha.Kind, "what the masters hold")
			if kind == admin.KindSemaphore {
				assert.Equal(t, admin.HeldAs{Kind: admin.KindSemaphore, Permits: 2, Held: 1}, ha)
			}
		})
	}
	kind, _ := admin.HeldKind("not a token")
	assert.Empty(t, kind)
	assert.Equal(t, admin.KindLock, admin.OwnerPrimitive(nil), "no owner: a plain lock or another library's value")
	ha, err := adm.ReadHeldAs(ctx, "h-nobody", 4)
	require.NoError(t, err)
	assert.Equal(t, admin.HeldAs{}, ha, "a free name")
}
