package admin_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBugSharedHolderValidityCountsFromTheListing: a shared holder's validity in
// Primitives is counted at the listing's ObservedAt, as every other validity of
// a listing is, however long after the listing its members are read: the
// deadline it shows (ObservedAt + Validity) is the holder's own Until within a
// round trip, and never later than the masters' expiry. The delay since the
// listing was subtracted where it must be added: the deadline shown was early by
// twice the delay.
func TestBugSharedHolderValidityCountsFromTheListing(t *testing.T) {
	ctx := context.Background()
	_, m, adm := testCluster(t, 3)
	const ttl = time.Minute
	doc, err := m.Shared("vs-doc")
	require.NoError(t, err)
	l, err := doc.TryAcquire(ctx, ttl)
	require.NoError(t, err)
	acquired := time.Now() // the masters' copies expire by acquired + ttl
	lst, err := adm.Inspect(ctx, "vs-*")
	require.NoError(t, err)
	time.Sleep(1500 * time.Millisecond) // the members are read well after the listing

	prims, err := adm.Primitives(ctx, lst)
	require.NoError(t, err)
	require.Len(t, prims, 1)
	require.Len(t, prims[0].Holders, 1)
	h := prims[0].Holders[0]
	require.Equal(t, l.Token(), h.Value)
	shown := lst.ObservedAt.Add(h.Validity)
	assert.False(t, shown.After(acquired.Add(ttl)), "never past the masters' expiry: shown %v, expiry by %v", shown, acquired.Add(ttl))
	assert.WithinDuration(t, l.Until(), shown, time.Second, "the holder's own deadline")
}
