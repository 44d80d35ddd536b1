package admin_test

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/quorum"
)

// TestBugForceExpireByTokenOfASharedHolder: ForceExpire and RevokeToken given
// the token of a shared holder remove that holder (RevokeToken leaves its
// tombstone) on every master, and its holder hears it through Done, as a plain
// lock's and a permit's do; the other shared holder stays. Both compared the
// token with a string key, found a sorted set, and kept it: the report said
// "changed" on every master while the holder stayed on the masters.
func TestBugForceExpireByTokenOfASharedHolder(t *testing.T) {
	ctx := context.Background()
	c, m, adm := testCluster(t, 3)
	tests := []struct {
		name   string
		action func(ctx context.Context, name, token string) (*quorum.Report, error)
		left   func(token string) string // what stays of the removed holder: "" or its tombstone
	}{
		{"force-expire", adm.ForceExpire, func(string) string { return "" }},
		{"revoke", func(ctx context.Context, name, token string) (*quorum.Report, error) {
			_, rep, err := adm.RevokeToken(ctx, name, token)
			return rep, err
		}, tombstoneOf},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := "fst-" + tt.name
			sh, err := m.Shared(name)
			require.NoError(t, err)
			gone, err := sh.TryAcquire(ctx, time.Minute, quorum.WithLossWatch())
			require.NoError(t, err)
			defer func() { _ = gone.Release(ctx) }()
			stays, err := sh.TryAcquire(ctx, time.Minute)
			require.NoError(t, err)
			defer func() { _ = stays.Release(ctx) }()

			rep, err := tt.action(ctx, name, gone.Token())
			require.NoError(t, err)
			assert.Equal(t, 3, rep.Votes, "removed on every master: %+v", rep.Nodes)
			for _, s := range c.Servers {
				members, err := s.Client().ZRange(ctx, m.Key(name), 0, -1).Result()
				require.NoError(t, err)
				assert.NotContains(t, members, gone.Token(), "%s still holds the removed holder", s.Name)
				assert.Contains(t, members, stays.Token(), "%s lost the other holder", s.Name)
				if left := tt.left(gone.Token()); left != "" {
					assert.Contains(t, members, left, "%s: the revoked holder's tombstone", s.Name)
				}
			}
			select {
			case <-gone.Done():
				assert.ErrorIs(t, context.Cause(gone.Context()), quorum.ErrLost)
			case <-time.After(10 * time.Second):
				t.Fatal("the removed holder never heard of it")
			}
			assert.NoError(t, stays.Verify(ctx), "the other holder still holds")

			// A token that matches nothing removes nothing and says so.
			rep, err = tt.action(ctx, name, "rl1.nobody.x")
			require.NoError(t, err)
			assert.Equal(t, 0, rep.Votes)
			for _, nr := range rep.Nodes {
				assert.NotEqual(t, quorum.OutcomeOK, nr.Outcome, nr.Node)
			}
			assert.NoError(t, stays.Verify(ctx), "the other holder still holds")
		})
	}
}

// tombstoneOf is the tombstone a revocation leaves of value (revoke_shared.lua).
func tombstoneOf(value string) string {
	sum := sha1.Sum([]byte(value))
	return "rl1x." + hex.EncodeToString(sum[:])
}

// TestBugForceExpireByTokenOfARevokedSharedHolder: ForceExpire by token of a
// revoked shared holder removes its tombstone (force-expire -now after a
// revocation: the name is free of it at once) and reports it removed on every
// master, not missing.
func TestBugForceExpireByTokenOfARevokedSharedHolder(t *testing.T) {
	ctx := context.Background()
	c, m, adm := testCluster(t, 3)
	sh, err := m.Shared("fst-revoked")
	require.NoError(t, err)
	gone, err := sh.TryAcquire(ctx, time.Minute)
	require.NoError(t, err)
	stays, err := sh.TryAcquire(ctx, time.Minute)
	require.NoError(t, err)
	defer func() { _ = stays.Release(ctx) }()
	_, _, err = adm.RevokeToken(ctx, "fst-revoked", gone.Token())
	require.NoError(t, err)

	rep, err := adm.ForceExpire(ctx, "fst-revoked", gone.Token())
	require.NoError(t, err)
	assert.Equal(t, 3, rep.Votes, "its tombstone removed on every master: %+v", rep.Nodes)
	for _, s := range c.Servers {
		members, err := s.Client().ZRange(ctx, m.Key("fst-revoked"), 0, -1).Result()
		require.NoError(t, err)
		assert.Equal(t, []string{stays.Token()}, members, s.Name)
	}
}
