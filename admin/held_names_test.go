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

// A by-token action given names the token was not taken for: ReleaseHeld of a
// multi-name hold's token with one right name and one wrong one deleted the
// right name and reported the hold released, while its other name stayed
// locked on every master until its TTL (and the holder, told of the loss, could
// not release it either). An action with the wrong names must touch nothing
// and say so; with the right names in any order it acts.
func TestBugHeldActionWithAnotherNameOfTheToken(t *testing.T) {
	ctx := context.Background()
	c, m, a := testCluster(t, 3)
	const ttl = 20 * time.Second
	tests := []struct {
		name  string
		names []string // given to the action, for the hold of ab-a and ab-b
		other bool     // refused: the token was taken for other names
	}{
		{"one name right, one wrong", []string{"ab-a", "ab-c"}, true},
		{"the other name right", []string{"ab-z", "ab-b"}, true},
		{"both names wrong", []string{"ab-x", "ab-y"}, true},
		{"the names in another order", []string{"ab-b", "ab-a"}, false},
	}
	for _, tt := range tests {
		for _, op := range []string{"release", "extend"} {
			t.Run(tt.name+"/"+op, func(t *testing.T) {
				mu, err := m.Multi("ab-a", "ab-b")
				require.NoError(t, err)
				l, err := mu.TryAcquire(ctx, ttl, quorum.WithLossWatch())
				require.NoError(t, err)
				t.Cleanup(func() { _ = l.Release(context.Background()) })
				if op == "release" {
					_, err = a.ReleaseHeld(ctx, tt.names, l.Token())
				} else {
					_, _, err = a.ExtendHeld(ctx, tt.names, l.Token(), ttl)
				}
				if !tt.other {
					require.NoError(t, err)
					return
				}
				require.ErrorIs(t, err, admin.ErrOtherLock)
				for _, s := range c.Servers {
					for _, k := range []string{"lock:ab-a", "lock:ab-b"} {
						v, err := s.Client().Get(ctx, k).Result()
						require.NoError(t, err, "%s on %s", k, s.Name)
						assert.Equal(t, l.Token(), v, "%s on %s is still the hold's", k, s.Name)
					}
				}
				assert.NoError(t, l.Verify(ctx), "the holder still holds every name")
				require.NoError(t, l.Release(ctx))
			})
		}
	}
}
