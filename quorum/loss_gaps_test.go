package quorum

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/faults"
	"github.com/redlock/redlock/internal/keyspace"
	"github.com/redlock/redlock/internal/redistest"
)

// stateOn waits until the loss watch of l has read its first key on master idx
// and found it in state want.
func stateOn(t *testing.T, m *Manager, l *Lock, idx int, want uint8) {
	t.Helper()
	require.Eventually(t, func() bool {
		tr := m.losses().trackers[idx]
		tr.mu.Lock()
		var lw *lossWatch
		for _, x := range tr.keys[l.watchKeys()[0]] {
			if x.l == l {
				lw = x
			}
		}
		tr.mu.Unlock()
		if lw == nil {
			return false
		}
		lw.mu.Lock()
		defer lw.mu.Unlock()
		return lw.st[idx*len(lw.keys)] == want
	}, 5*time.Second, 5*time.Millisecond, "the loss watch never saw the state %d on master %d", want, idx)
}

// TestBugLossWatchHearsTheLossOfALongKey: the watch read the keys of an
// invalidation push as it reads values, keeping none longer than ValueReadCap
// (512 bytes), so the invalidation of a key that long (a long key prefix plus
// a long name: neither is bounded to keep their sum under it) named an empty
// key, matched no watched key and was dropped: a DEL on a quorum went unheard
// until the next extension (20 s here) or Until.
func TestBugLossWatchHearsTheLossOfALongKey(t *testing.T) {
	c, m := testCluster(t, 5, WithKeyPrefix(strings.Repeat("p", 400)+":"))
	ctx := context.Background()
	l, err := m.Acquire(ctx, strings.Repeat("n", MaxNameLen), 60*time.Second, WithLossWatch())
	require.NoError(t, err)
	require.Greater(t, len(l.Key()), keyspace.ValueReadCap)
	armed(t, m, l)
	for _, s := range c.Servers[:3] {
		require.NoError(t, s.Client().Del(ctx, l.Key()).Err())
	}
	select {
	case <-l.Done():
		require.ErrorIs(t, l.Err(), ErrLost)
	case <-time.After(5 * time.Second):
		t.Fatal("the loss of a key longer than ValueReadCap was not heard within 5s")
	}
}

// TestBugLossWatchRetriesAnInconclusiveVerification: the watch verified a lock
// only when a master went from holding it to not holding it. A verification
// that could not decide (too few masters answered: ErrUnavailable) was never
// made again, and the masters it was waiting for, once they answered again,
// showed nothing new to the watch (their key was gone before): the loss stayed
// unheard until the next extension (20 s here) or Until. Here master 2 loses
// the key (one master: no loss), then its link goes silent while masters 0 and
// 1 lose it too (3 of 5: a loss, but only 2 are seen missing); when the link
// heals, Done must fire.
func TestBugLossWatchRetriesAnInconclusiveVerification(t *testing.T) {
	a := newAtk(t, 5, redistest.Options{})
	m := a.client("holder")
	ctx := context.Background()
	l, err := m.Acquire(ctx, "inconclusive", 60*time.Second, WithLossWatch())
	require.NoError(t, err)
	armed(t, m, l)
	srv := a.c.Servers
	require.NoError(t, srv[2].Client().Del(ctx, l.Key()).Err())
	stateOn(t, m, l, 2, stGone)
	time.Sleep(100 * time.Millisecond) // its verification: 4 of 5 still hold
	require.NoError(t, l.Err())

	a.net.Each("holder", (*faults.Proxy).Blackhole, srv[2].Name)
	for _, s := range srv[:2] {
		require.NoError(t, s.Client().Del(ctx, l.Key()).Err())
	}
	stateOn(t, m, l, 0, stGone)
	stateOn(t, m, l, 1, stGone)
	time.Sleep(time.Second) // the verification: 2 missing, 1 silent, 2 held
	require.NoError(t, l.Err(), "a verification without an answer of master 2 decided")

	a.net.Each("holder", func(p *faults.Proxy) { p.Heal() }, srv[2].Name)
	healed := time.Now()
	select {
	case <-l.Done():
		t.Logf("Done %v after the link healed", time.Since(healed))
		require.ErrorIs(t, l.Err(), ErrLost)
	case <-time.After(trackPoll + 4*time.Second):
		t.Fatal("the loss was not heard once every master answered again")
	}
}

// TestBugLossWatchTracksAgainAfterABusyMaster: a tracking connection dialled
// while the master runs a long script (BUSY: HELLO is allowed then, CLIENT
// TRACKING is not) was kept as a connection without tracking, read every
// trackPoll instead of tracked, for as long as it lived: every loss on that
// master was heard up to a second late, long after the script ended. A refusal
// that says the master is busy or loading is now a failed dial: the watch
// dials again and tracks once the master answers.
func TestBugLossWatchTracksAgainAfterABusyMaster(t *testing.T) {
	a := newAtk(t, 3, redistest.Options{})
	m := a.client("holder")
	ctx := context.Background()
	l, err := m.Acquire(ctx, "busy", 60*time.Second, WithLossWatch())
	require.NoError(t, err)
	armed(t, m, l)
	srv := a.c.Servers[0]
	require.NoError(t, faults.SetConfig(ctx, srv, "busy-reply-threshold", "10"))
	done := make(chan error, 1)
	go func() { // a script busy for 1.5 s
		done <- srv.Client().Eval(ctx, `local t = redis.call('TIME') local s = t[1] * 1000000 + t[2]
while true do t = redis.call('TIME') if t[1] * 1000000 + t[2] - s > 1500000 then return 1 end end`, nil).Err()
	}()
	time.Sleep(200 * time.Millisecond)
	a.net.Each("holder", (*faults.Proxy).Reset, srv.Name) // the watch dials again, into the busy master
	require.NoError(t, <-done)
	require.Eventually(t, func() bool { return m.losses().trackers[0].tracking.Load() },
		3*time.Second, 10*time.Millisecond, "the watch never tracked again on the master once its script ended")
	require.NoError(t, l.Err())
}

// TestBugLossWatchHearsASwapDB: SWAPDB replaces every key of the lock's database
// and pushes no invalidation (redis-server 7.0), so a SWAPDB with an empty
// database on a quorum went unheard until the next extension (20 s here) or
// Until. The watch's check of each connection every trackPoll is now EXISTS of
// a key the master was seen holding: gone unannounced, every key is read again.
func TestBugLossWatchHearsASwapDB(t *testing.T) {
	c, m := testCluster(t, 5)
	ctx := context.Background()
	l, err := m.Acquire(ctx, "swapped", 60*time.Second, WithLossWatch())
	require.NoError(t, err)
	armed(t, m, l)
	for _, s := range c.Servers[:3] {
		require.NoError(t, s.Client().Do(ctx, "SWAPDB", "0", "1").Err())
	}
	select {
	case <-l.Done():
		require.ErrorIs(t, l.Err(), ErrLost)
	case <-time.After(trackPoll + 3*time.Second):
		t.Fatal("a SWAPDB on 3 of 5 masters was not heard")
	}
}
