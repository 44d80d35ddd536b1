package admin_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/admin"
)

// A revoked shared holder lists as its tombstone, free when the lock-delay
// ends, holding nothing: what force-expire and the console show of it.
func TestRevokedSharedHolderListsAsItsTombstone(t *testing.T) {
	ctx := context.Background()
	_, m, adm := testCluster(t, 3)
	doc, err := m.Shared("rs-doc")
	require.NoError(t, err)
	l, err := doc.TryAcquire(ctx, 30*time.Second)
	require.NoError(t, err)
	free, rep, err := adm.RevokeShared(ctx, "rs-doc", l.Token())
	require.NoError(t, err)
	require.Equal(t, 3, rep.Votes)
	assert.Greater(t, time.Until(free), 25*time.Second, "the lock-delay lasts the revoked validity")

	lst, err := adm.Inspect(ctx, "rs-*")
	require.NoError(t, err)
	prims, err := adm.Primitives(ctx, lst)
	require.NoError(t, err)
	require.Len(t, prims, 1)
	p := prims[0]
	require.Len(t, p.Holders, 1)
	h := p.Holders[0]
	assert.Equal(t, admin.Tombstone(l.Token()), h.Value)
	assert.True(t, admin.IsTombstone(h.Value))
	assert.WithinDuration(t, free, h.FreeAt, 2*time.Second)
	assert.Zero(t, h.Validity)
	assert.Nil(t, h.Owner)
	assert.Zero(t, p.Held, "a tombstone holds nothing")
	assert.Equal(t, admin.StatePartial, p.State(), "kept out, held by nobody: partial until it ends")
}
