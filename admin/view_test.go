package admin_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/quorum"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A listing seen as primitives shows each for what it is, as the masters hold
// it: the test compares what Primitives reports with what was taken.
func TestPrimitivesGroupsAListing(t *testing.T) {
	ctx := context.Background()
	c, m, adm := testCluster(t, 3)
	ttl := 10 * time.Second
	_, err := m.TryAcquire(ctx, "v-plain", ttl)
	require.NoError(t, err)
	multi, err := m.Multi("v-c", "v-a", "v-b")
	require.NoError(t, err)
	mu, err := multi.TryAcquire(ctx, ttl)
	require.NoError(t, err)
	sem, err := m.Semaphore("v-sem", 3)
	require.NoError(t, err)
	doc, err := m.Shared("v-doc")
	require.NoError(t, err)
	for range 2 {
		_, err = sem.TryAcquire(ctx, ttl)
		require.NoError(t, err)
	}
	var shared []*quorum.Lock
	for range 2 {
		l, err := doc.TryAcquire(ctx, ttl)
		require.NoError(t, err)
		shared = append(shared, l)
	}
	e, err := m.Election("v-crond")
	require.NoError(t, err)
	lead, err := e.Campaign(ctx, "10.0.0.7:80", ttl)
	require.NoError(t, err)
	defer lead.Release(ctx)
	// A leftover of one shared holder on a single master is not a holder.
	require.NoError(t, c.Servers[0].Client().ZAdd(ctx, "lock:v-doc", redisZ(time.Now().Add(time.Hour), "rl1.stray.x")).Err())

	lst, err := adm.Inspect(ctx, "v-*")
	require.NoError(t, err)
	prims, err := adm.Primitives(ctx, lst)
	require.NoError(t, err)
	got := map[string]admin.Primitive{}
	for _, p := range prims {
		got[string(p.Kind)+":"+p.Name] = p
	}
	require.Len(t, got, 5, "%v", viewKeys(got))

	assert.Len(t, got["lock:v-plain"].Locks, 1)
	mp := got["multi:v-a v-b v-c"]
	assert.Equal(t, []string{"v-a", "v-b", "v-c"}, mp.Names)
	assert.Equal(t, mu.Token(), mp.Locks[0].Value, "one token for every name")
	sp := got["semaphore:v-sem"]
	assert.Equal(t, 3, sp.Permits)
	assert.Equal(t, 2, sp.Held)
	sh := got["shared:v-doc"]
	assert.Equal(t, 2, sh.Held, "two holders on a quorum; the stray one is not counted")
	require.Len(t, sh.Holders, 3)
	for _, h := range sh.Holders[:2] {
		assert.Equal(t, 3, h.Votes)
		assert.Positive(t, h.Validity)
		assert.Contains(t, []string{shared[0].Token(), shared[1].Token()}, h.Value)
	}
	assert.Equal(t, 1, sh.Holders[2].Votes)
	assert.Zero(t, sh.Holders[2].Validity)
	ld := got["leader:v-crond"]
	require.NotNil(t, ld.Leader, "%v", ld.LeaderErr)
	assert.Equal(t, "10.0.0.7:80", ld.Leader.Value)
	assert.Equal(t, lead.Term(), ld.Leader.Term)
}

func viewKeys[V any](m map[string]V) []string {
	out := []string{}
	for k := range m {
		out = append(out, k)
	}
	return out
}

func redisZ(expiry time.Time, member string) redis.Z {
	return redis.Z{Score: float64(expiry.UnixMilli()), Member: member}
}
