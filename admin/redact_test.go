package admin_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/quorum"
)

// Redact shows what the listing's RedactedValue shows, and never a holder's
// full token, for a lock the masters really hold and for other clients' values.
func TestRedactMatchesTheListingAndHidesTheToken(t *testing.T) {
	ctx := context.Background()
	_, m, a := testCluster(t, 3)
	l, err := m.TryAcquire(ctx, "redact/ours", 10*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Release(context.Background()) })

	lst, err := a.Inspect(ctx, "redact/*")
	require.NoError(t, err)
	li := lst.Lock("redact/ours")
	require.NotNil(t, li)
	got := admin.Redact(li.Value)
	assert.Equal(t, li.RedactedValue(), got)
	assert.True(t, strings.HasPrefix(got, "rl1."), got)
	assert.NotContains(t, got, l.Token())
	token, _, _ := strings.Cut(strings.TrimPrefix(li.Value, "rl1."), ".")
	require.Len(t, token, 27, li.Value)
	assert.NotContains(t, got, token)

	tests := []struct{ value, want string }{
		{"dGhpcyBpcyByZWRzeW5jIQ==", "dGhpcy…"}, // a redsync value
		{"abc", "***"},
		{"", ""},
		{"rl1.notours", "rl1.no…"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, admin.Redact(tt.value), tt.value)
	}
}

// RedactedValue is Redact of the leading value, for values of the lock library
// and any other.
func TestRedactedValueIsRedact(t *testing.T) {
	ctx := context.Background()
	c, m, a := testCluster(t, 3)
	_, err := m.TryAcquire(ctx, "ours", time.Minute, quorum.WithLockOwner("job"))
	require.NoError(t, err)
	for _, s := range c.Servers {
		require.NoError(t, s.Client().Set(ctx, "lock:foreign", "dGhpcyBpcyByZWRzeW5jIQ==", time.Minute).Err())
		require.NoError(t, s.Client().Set(ctx, "lock:fake", "rl1.AAAAAAAAAAAAAAAAAAAAAAAAAAA.bm90IGpzb24", time.Minute).Err())
		require.NoError(t, s.Client().Set(ctx, "lock:short", "rl1.", time.Minute).Err())
	}
	lst, err := a.Inspect(ctx, "")
	require.NoError(t, err)
	require.Len(t, lst.Locks, 4)
	for _, li := range lst.Locks {
		assert.Equal(t, admin.Redact(li.Value), li.RedactedValue(), li.Name)
	}
	assert.NotNil(t, lst.Lock("ours").Owner)
}
