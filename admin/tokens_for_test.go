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

// A value carries the tag of the name it was taken for; CheckTokenFor refuses
// it for another name and passes values without a tag.
func TestBugTokenCarriesItsName(t *testing.T) {
	ctx := context.Background()
	_, m, _ := testCluster(t, 3)
	l, err := m.TryAcquire(ctx, "tokA", 10*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Release(context.Background()) })
	ab, err := m.Multi("a", "b")
	require.NoError(t, err)
	mu, err := ab.TryAcquire(ctx, 10*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = mu.Release(context.Background()) })
	plain, multi := l.Token(), mu.Token()
	old := admin.Value{Token: "AAAAAAAAAAAAAAAAAAAAAAAAAAA", Owner: quorum.Owner{Host: "h"}}.String()
	tests := []struct {
		name  string
		token string
		names []string
		other bool
	}{
		{"own name", plain, []string{"tokA"}, false},
		{"another name", plain, []string{"tokB"}, true},
		{"multi in any order", multi, []string{"b", "a"}, false},
		{"multi with other names", multi, []string{"a", "c"}, true},
		{"multi with fewer names: the hold says", multi, []string{"a"}, false},
		{"no tag: an earlier version", old, []string{"anything"}, false},
		{"not a value of the lock library", "foreign-value", []string{"x"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := admin.CheckTokenFor(tt.token, tt.names...)
			if tt.other {
				assert.ErrorIs(t, err, admin.ErrOtherLock)
			} else {
				assert.NoError(t, err)
			}
		})
	}
}

// Library reads a token of the lock library as "redlock", a value of its shape
// that does not parse as "unknown", and the other clients' shapes as theirs.
func TestLibraryGuessesTheWriter(t *testing.T) {
	ctx := context.Background()
	_, m, _ := testCluster(t, 3)
	l, err := m.TryAcquire(ctx, "lib", 10*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Release(context.Background()) })
	for value, want := range map[string]string{
		l.Token():                              "redlock",
		"rl1.not-a-value":                      "unknown",
		"c2l4dGVlbiBieXRlcyEhIQ==":             "redsync",
		"0123456789abcdef0123456789abcdef":     "node-redlock",
		"01234567-89ab-cdef-0123-456789abcdef": "redlock.net/pottery",
		"anything else":                        "unknown",
	} {
		assert.Equal(t, want, admin.Library(value), value)
	}
}
