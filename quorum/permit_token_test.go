package quorum

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// takePermits fills a semaphore of n permits with n holders, slot 0 first, and
// returns them in slot order.
func takePermits(t *testing.T, m *Manager, name string, n int, ttl time.Duration) []*Lock {
	t.Helper()
	out := make([]*Lock, n)
	for range n {
		l, err := m.TryAcquire(context.Background(), name, ttl, withPermits(n))
		require.NoError(t, err)
		out[slotOf(l)] = l
	}
	return out
}

// TestBugPermitByTokenFindsItsSlotInOneRound: extend and release by token of a
// permit on a high slot, with one master of three paused, finish within their
// deadline, report the permit's own slot, and change nothing of the other
// holders. They tried the slots one round each from slot 0: extend ran out of
// time and reported slot 0, another holder's, as "lost"; release reported slot 0.
func TestBugPermitByTokenFindsItsSlotInOneRound(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3, WithNodeTimeout(200*time.Millisecond))
	const n = 40
	holders := takePermits(t, m, "tok-sem", n, time.Minute)
	ours := holders[n-1]
	slot := "lock:tok-sem:permit:" + strconv.Itoa(n-1)
	require.Equal(t, slot, ours.Key())
	c.Servers[2].Stop()
	t.Cleanup(c.Servers[2].Cont)

	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	until, rep, err := m.extendHeld(dctx, []string{"tok-sem"}, ours.Token(), 2*time.Minute)
	require.NoError(t, err)
	assert.Equal(t, slot, rep.Key, "the report is our slot's")
	assert.Equal(t, 2, rep.Votes)
	assert.True(t, until.After(ours.Until()))

	rep, err = m.releaseHeld(dctx, []string{"tok-sem"}, ours.Token())
	require.ErrorIs(t, err, ErrPartialRelease, "the paused master did not answer")
	assert.Equal(t, slot, rep.Key, "the report is our slot's")
	assert.Equal(t, 2, rep.count(OutcomeOK))
	for i, s := range c.Servers[:2] {
		keys := s.Keys(ctx)
		assert.NotContains(t, keys, slot, "master %d: our permit is released", i)
		for j := range n - 1 {
			assert.Contains(t, keys, "lock:tok-sem:permit:"+strconv.Itoa(j), "master %d: another holder's permit is kept", i)
		}
	}
}

// TestBugPermitReleaseByTokenExpiredIsMissing: the release by token of a permit
// that expired while another holder keeps slot 0 reports "missing" (no error, no
// master counted as another owner's), as a plain lock in the same state does; it
// reported slot 0 held by another owner on every master.
func TestBugPermitReleaseByTokenExpiredIsMissing(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3)
	keep, err := m.TryAcquire(ctx, "exp-sem", time.Minute, withPermits(2))
	require.NoError(t, err)
	require.Equal(t, 0, slotOf(keep))
	ours, err := m.TryAcquire(ctx, "exp-sem", 100*time.Millisecond, withPermits(2))
	require.NoError(t, err)
	<-ours.Done() // expired: its slot is free
	require.Eventually(t, func() bool { return len(keysOn(t, c, ours.Key())) == 0 }, 5*time.Second, 20*time.Millisecond)

	rep, err := m.releaseHeld(ctx, []string{"exp-sem"}, ours.Token())
	require.NoError(t, err)
	assert.Equal(t, 3, rep.count(OutcomeMissing), "missing on every master")
	assert.Zero(t, rep.count(OutcomeForeign), "slot 0 is another holder's permit, not ours held elsewhere")
	_, _, err = m.extendHeld(ctx, []string{"exp-sem"}, ours.Token(), time.Second)
	require.ErrorIs(t, err, ErrLost)
	assert.NoError(t, keep.Verify(ctx), "the other holder keeps slot 0")
}

// TestBugPermitExtendByTokenSkipsAStray pins that extend by token of a permit
// extends the slot a majority holds, not a leftover of the same token on a lower
// slot of one master (a failed round's): that leftover keeps the TTL it had.
// Before, the slots were tried from slot 0 and the leftover was extended first.
func TestBugPermitExtendByTokenSkipsAStray(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3)
	holders := takePermits(t, m, "stray-sem", 3, time.Minute)
	ours := holders[2]
	require.NoError(t, holders[0].Release(ctx))
	// Our token is left on the free slot 0 of master 0, as a round that
	// reached that master alone leaves it.
	stray := "lock:stray-sem:permit:0"
	cl := c.Servers[0].Client()
	require.NoError(t, cl.Set(ctx, stray, ours.Token(), 10*time.Second).Err())

	_, rep, err := m.extendHeld(ctx, []string{"stray-sem"}, ours.Token(), 5*time.Minute)
	require.NoError(t, err)
	assert.Equal(t, ours.Key(), rep.Key)
	assert.Equal(t, 3, rep.Votes)
	left, err := cl.PTTL(ctx, stray).Result()
	require.NoError(t, err)
	assert.LessOrEqual(t, left, 10*time.Second, "the leftover is not extended")
	left, err = cl.PTTL(ctx, ours.Key()).Result()
	require.NoError(t, err)
	assert.Greater(t, left, 2*time.Minute, "our permit is extended")

	_, err = m.releaseHeld(ctx, []string{"stray-sem"}, ours.Token())
	require.NoError(t, err)
	assert.Empty(t, keysOn(t, c, stray), "the leftover goes with the release")
	assert.Empty(t, keysOn(t, c, ours.Key()))
	assert.NoError(t, holders[1].Verify(ctx), "the other holder keeps its permit")
}
