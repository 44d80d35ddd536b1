package quorum

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/wire"
)

func TestNewValidatesOptions(t *testing.T) {
	good := []Node{{Name: "a", Addr: "127.0.0.1:1"}, {Name: "b", Addr: "127.0.0.1:2"}, {Name: "c", Addr: "127.0.0.1:3"}}
	tests := []struct {
		name  string
		nodes []Node
		opts  []Option
		want  string
	}{
		{"no nodes", nil, nil, "no masters"},
		{"duplicate name", []Node{{Name: "a", Addr: "127.0.0.1:1"}, {Name: "a", Addr: "127.0.0.1:2"}}, nil, "master a declared twice"},
		{"duplicate address", []Node{{Name: "a", Addr: "127.0.0.1:1"}, {Name: "b", Addr: "127.0.0.1:1"}}, nil, "address 127.0.0.1:1 used twice"},
		{"empty name", []Node{{Addr: "127.0.0.1:1"}}, nil, "master #1 has no name"},
		{"no address", []Node{{Name: "a"}}, nil, "master a has no address"},
		{"drift factor negative", good, []Option{WithDrift(-0.1, 0)}, "drift factor"},
		{"drift factor too big", good, []Option{WithDrift(0.5, 0)}, "drift factor"},
		{"zero node timeout", good, []Option{WithNodeTimeout(0)}, "node timeout"},
		{"negative delay", good, []Option{WithRetry(3, -time.Second, 0)}, "retry delay"},
		{"zero attempts", good, []Option{WithRetry(0, time.Second, 0)}, "retry attempts"},
		{"jitter above delay", good, []Option{WithRetry(3, time.Second, 2*time.Second)}, "jitter"},
		{"empty prefix", good, []Option{WithKeyPrefix("")}, "key prefix"},
		{"zero max ttl", good, []Option{WithMaxTTL(0)}, "max ttl"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.nodes, tt.opts...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	m, err := New(good)
	require.NoError(t, err)
	assert.Equal(t, 2, m.Quorum())
	assert.Equal(t, []string{"a", "b", "c"}, m.Nodes())
}

func TestScriptSHA1sArePinned(t *testing.T) {
	// An edit to a script must be deliberate: update the pin with it. SHA-1 is what
	// EVALSHA uses (redsync v4.14.0 broke EVALSHA by hashing with SHA-256).
	pins := map[string]struct {
		src, sha string
		script   interface{ Hash() string } // a go-redis script, or a wire.Script
	}{
		"release":         {releaseLua, "6c6ae35e3bad29fc6c4da8e61cae6bfe054a106c", releaseScript},
		"extend":          {extendLua, "cf5157c7c104b20204fecb087d986152a092a580", extendScript},
		"fence_read":      {fenceReadLua, "728f2de662f20a84f34a9be5d4f6201f06a8d307", fenceReadScript},
		"fence":           {fenceRaiseLua, "67c60f06318340e57683af9c99d6b114f9eefbcd", fenceRaiseScript},
		"fair_acquire":    {fairAcquireLua, "56cca0077caa83cda0582853f66dbeeadbea5683", fairAcquireScript},
		"fair_unwind":     {fairUnwindLua, "41961e82b8a8408f8b65903ec7d4ee3e9ea23f29", fairUnwindScript},
		"fair_leave":      {fairLeaveLua, "35abe1b722a42dac31252c80eadd08eed5353263", fairLeaveScript},
		"force_expire":    {forceExpireLua, "8f83924ae51a46d1c69f402b8d8edb6de36df895", forceExpireW},
		"wait_round":      {waitRoundLua, "da1510c0b91a073cde274367352ec12207c0f4bd", waitRoundW},
		"wait_mark":       {waitMarkLua, "75aea98ce3fd7f086977a94aac3177a11b4f4806", waitMarkW},
		"revoke":          {revokeLua, "0f9c103d6b95508e8dedc161f0d6795e64fb647c", revokeW},
		"delete_announce": {deleteAnnounceLua, "a90791cd180889505016e99af82c06f8f2f84383", deleteAnnounceW},
		"revoke_shared":   {revokeSharedLua, "8e26e930a870c9e0aac96c8e9faf69f83d8803a7", revokeSharedW},
	}
	for name, p := range pins {
		sum := sha1.Sum([]byte(p.src))
		got := hex.EncodeToString(sum[:])
		assert.Equal(t, p.sha, got, "%s.lua changed: update its pinned SHA1", name)
		assert.Equal(t, got, p.script.Hash(), "%s: the script as sent hashes the same source", name)
	}
	for name, w := range map[string]*wire.Script{"release": releaseW, "extend": extendW, "fair_acquire": fairAcquireW} {
		assert.Equal(t, pins[name].sha, w.Hash(), "%s: the wire transport hashes the same source", name)
		assert.Equal(t, pins[name].src, w.Source(), name)
	}
}

func TestAcquireReleaseExtendHappyPath(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 5)
	start := time.Now()
	l, err := m.TryAcquire(ctx, "orders/1", 2*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "lock:orders/1", l.Key())
	assert.Equal(t, 5, l.Votes().Votes)
	assert.Len(t, keysOn(t, c, l.Key()), 5, "set on every master")
	for _, v := range keysOn(t, c, l.Key()) {
		assert.Equal(t, l.Token(), v)
	}
	// Until is never later than call start + ttl - drift (the call reads the clock a
	// few microseconds after the test does).
	assert.WithinDuration(t, start.Add(2*time.Second-m.DriftBudget(2*time.Second)), l.Until(), time.Millisecond)
	assert.False(t, l.Until().After(start.Add(2*time.Second-m.DriftBudget(2*time.Second)+time.Millisecond)))
	assert.True(t, l.Until().After(time.Now()))
	val, err := parseValue(l.Token())
	require.NoError(t, err)
	assert.NotZero(t, val.Owner.PID)

	before := l.Until()
	require.NoError(t, l.Extend(ctx, 3*time.Second))
	assert.True(t, l.Until().After(before), "extend moves Until")
	for _, s := range c.Servers {
		pttl := s.Client().PTTL(ctx, l.Key()).Val()
		assert.Greater(t, pttl, 2*time.Second, "master %s extended", s.Name)
	}
	select {
	case <-l.Done():
		t.Fatal("lock context done while held")
	default:
	}
	require.NoError(t, l.Release(ctx))
	assert.Empty(t, keysOn(t, c, l.Key()), "released everywhere")
	assert.ErrorIs(t, l.Err(), ErrReleased)
	require.NoError(t, l.Release(ctx), "release is idempotent")
	assert.ErrorIs(t, l.Extend(ctx, time.Second), ErrReleased)
}

func TestContentionNeverTwoHolders(t *testing.T) {
	_, m := testCluster(t, 5, WithRetry(200, 5*time.Millisecond, 4*time.Millisecond))
	var holders, maxHolders, acquired atomic.Int32
	var wg sync.WaitGroup
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				l, err := m.Acquire(context.Background(), "hot", time.Second)
				if err != nil {
					continue
				}
				acquired.Add(1)
				n := holders.Add(1)
				for {
					old := maxHolders.Load()
					if n <= old || maxHolders.CompareAndSwap(old, n) {
						break
					}
				}
				time.Sleep(2 * time.Millisecond)
				holders.Add(-1)
				require.NoError(t, l.Release(context.Background()))
			}
		}()
	}
	wg.Wait()
	assert.EqualValues(t, 1, maxHolders.Load(), "never two holders at once")
	assert.Greater(t, acquired.Load(), int32(10))
}

func TestTwoOfFiveDownStillWorks(t *testing.T) {
	c, m := testCluster(t, 5)
	c.Servers[0].Kill()
	c.Servers[3].Kill()
	l, err := m.TryAcquire(context.Background(), "two-down", time.Second)
	require.NoError(t, err)
	assert.Equal(t, 3, l.Votes().Votes)
	require.NoError(t, l.Extend(context.Background(), time.Second))
	err = l.Release(context.Background())
	var pe *PartialReleaseError
	require.ErrorAs(t, err, &pe, "release reports the masters it could not reach")
	assert.ErrorIs(t, err, ErrPartialRelease, "a quorum answered: released")
	assert.NotErrorIs(t, err, ErrUnavailable)
	assert.Contains(t, err.Error(), "a (")
	assert.Contains(t, err.Error(), "d (")
}

func TestThreeOfFiveDownCleanErrorNamingMasters(t *testing.T) {
	c, m := testCluster(t, 5)
	for _, i := range []int{1, 2, 4} {
		c.Servers[i].Kill()
	}
	start := time.Now()
	_, err := m.Acquire(context.Background(), "three-down", time.Second)
	elapsed := time.Since(start)
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrNotAcquired)
	assert.ErrorIs(t, err, ErrUnavailable)
	var ne *NodeError
	require.ErrorAs(t, err, &ne)
	for _, name := range []string{"b (", "c (", "e ("} {
		assert.Contains(t, err.Error(), name)
	}
	// attempts x (node timeout + max delay) + margin
	assert.Less(t, elapsed, 3*(200*time.Millisecond+30*time.Millisecond)+2*time.Second)
	assert.Empty(t, keysOn(t, c, "lock:three-down"), "the failed rounds left nothing behind")
}

func TestPausedMasterDoesNotDelayRoundPastNodeTimeout(t *testing.T) {
	c, m := testCluster(t, 5)
	c.Servers[2].Stop()
	c.Servers[4].Stop()
	t.Cleanup(func() { c.Servers[2].Cont(); c.Servers[4].Cont() })
	start := time.Now()
	l, err := m.TryAcquire(context.Background(), "slow", 5*time.Second)
	elapsed := time.Since(start)
	require.NoError(t, err)
	assert.Equal(t, 3, l.Votes().Votes)
	assert.Less(t, elapsed, 200*time.Millisecond+300*time.Millisecond, "bounded by the node timeout")
	require.ErrorIs(t, l.Release(context.Background()), ErrPartialRelease)
}

func TestExtendAfterExpiryFailsWithoutIO(t *testing.T) {
	c, m := testCluster(t, 3)
	l, err := m.TryAcquire(context.Background(), "short", 50*time.Millisecond)
	require.NoError(t, err)
	<-l.Done()
	assert.ErrorIs(t, l.Err(), ErrLost)
	// Prove no I/O: every master is paused; an extend that talked to them would
	// take the node timeout and report node errors.
	for _, s := range c.Servers {
		s.Stop()
	}
	t.Cleanup(func() {
		for _, s := range c.Servers {
			s.Cont()
		}
	})
	start := time.Now()
	err = l.Extend(context.Background(), time.Second)
	assert.ErrorIs(t, err, ErrLost)
	var ne *NodeError
	assert.False(t, errors.As(err, &ne), "no master was asked")
	assert.Less(t, time.Since(start), 50*time.Millisecond)
}

func TestExtendTTLValidatedBeforeIO(t *testing.T) {
	c, m := testCluster(t, 3)
	l, err := m.TryAcquire(context.Background(), "ttl", time.Second)
	require.NoError(t, err)
	for _, ttl := range []time.Duration{0, -time.Second, time.Microsecond, 10 * time.Minute} {
		assert.ErrorIs(t, l.Extend(context.Background(), ttl), ErrInvalidArgument, "ttl %v", ttl)
		_, _, err := m.extendToken(context.Background(), "ttl", l.Token(), ttl)
		assert.ErrorIs(t, err, ErrInvalidArgument, "ttl %v", ttl)
	}
	// PEXPIRE 0 would have deleted the key: it must still be everywhere.
	assert.Len(t, keysOn(t, c, l.Key()), 3)
	_, err = m.TryAcquire(context.Background(), "x", 0)
	assert.ErrorIs(t, err, ErrInvalidArgument)
}

func TestForeignTokenNeverTouchesOwnersKey(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 5)
	l, err := m.TryAcquire(ctx, "owned", 5*time.Second)
	require.NoError(t, err)
	other, err := newValue(Owner{Label: "intruder"})
	require.NoError(t, err)

	rep, err := m.releaseToken(ctx, "owned", other)
	require.NoError(t, err)
	assert.Equal(t, 5, rep.count(OutcomeForeign))
	_, _, err = m.extendToken(ctx, "owned", other, time.Minute)
	assert.ErrorIs(t, err, ErrLost)
	rep, err = m.forceExpire(ctx, "owned", other)
	require.NoError(t, err)
	assert.Equal(t, 5, rep.count(OutcomeForeign))
	for name, v := range keysOn(t, c, l.Key()) {
		assert.Equal(t, l.Token(), v, "master %s", name)
		assert.LessOrEqual(t, c.Servers[0].Client().PTTL(ctx, l.Key()).Val(), 5*time.Second, "ttl not extended by the intruder")
	}
	assert.Len(t, keysOn(t, c, l.Key()), 5)
}

func TestFailedRoundLeavesNoKeyBehind(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 5)
	// Another owner holds the key on 3 masters: we win at most 2 and must undo them.
	for _, s := range c.Servers[:3] {
		require.NoError(t, s.Client().Set(ctx, "lock:contended", "someone-else", time.Minute).Err())
	}
	_, err := m.TryAcquire(ctx, "contended", time.Second)
	require.ErrorIs(t, err, ErrNotAcquired)
	require.ErrorIs(t, err, ErrHeld)
	got := keysOn(t, c, "lock:contended")
	assert.Len(t, got, 3)
	for _, v := range got {
		assert.Equal(t, "someone-else", v)
	}
}

func TestCancelledContextMatchesBothSentinels(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	c, m := testCluster(t, 3)
	require.NoError(t, c.Servers[0].Client().Set(ctx, "lock:busy", "x", time.Minute).Err())
	require.NoError(t, c.Servers[1].Client().Set(ctx, "lock:busy", "x", time.Minute).Err())
	m2 := managerFor(t, c, WithRetry(1000, 10*time.Millisecond, 0))
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	_, err := m2.Acquire(ctx, "busy", time.Second)
	assert.ErrorIs(t, err, ErrNotAcquired)
	assert.ErrorIs(t, err, context.Canceled)
	_ = m
	assert.Equal(t, "", keysOn(t, c, "lock:busy")["c"], "nothing left on the free master")
}

func TestNoscriptFallbackAfterScriptFlush(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3)
	l, err := m.TryAcquire(ctx, "flush", 2*time.Second)
	require.NoError(t, err)
	require.NoError(t, l.Extend(ctx, 2*time.Second))
	for _, s := range c.Servers {
		require.NoError(t, s.Client().ScriptFlush(ctx).Err())
	}
	require.NoError(t, l.Extend(ctx, 2*time.Second), "extend falls back to EVAL")
	for _, s := range c.Servers {
		require.NoError(t, s.Client().ScriptFlush(ctx).Err())
	}
	require.NoError(t, l.Release(ctx), "release falls back to EVAL")
	assert.Empty(t, keysOn(t, c, l.Key()))
}

func TestWrongTypeIsANodeErrorNotTaken(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3)
	// A Redisson-style hash on one master.
	require.NoError(t, c.Servers[0].Client().HSet(ctx, "lock:hash", "uuid:1", 1).Err())
	l, err := m.TryAcquire(ctx, "hash", time.Second)
	require.NoError(t, err, "2 of 3 is a quorum")
	rep, err := m.releaseToken(ctx, "hash", l.Token())
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrWrongType)
	assert.Equal(t, OutcomeError, rep.Nodes[0].Outcome)
	assert.Equal(t, "hash", c.Servers[0].Client().Type(ctx, "lock:hash").Val(), "the hash is untouched")
}

func TestKeepAliveExtendsAndStopsAtCap(t *testing.T) {
	_, m := testCluster(t, 3)
	l, err := m.TryAcquire(context.Background(), "ka", 300*time.Millisecond, WithKeepAlive(KeepAlive{Fraction: 0.3, MaxExtensions: 3}))
	require.NoError(t, err)
	first := l.Until()
	select {
	case <-l.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("keep-alive never stopped at its cap")
	}
	assert.ErrorIs(t, l.Err(), ErrLost)
	assert.ErrorIs(t, l.Err(), ErrExtensionCap)
	assert.True(t, l.Until().After(first.Add(150*time.Millisecond)), "it did extend")
	assert.False(t, time.Now().Before(l.Until()), "lost only once validity ended")
}

func TestKeepAliveMaxHold(t *testing.T) {
	_, m := testCluster(t, 3)
	start := time.Now()
	l, err := m.TryAcquire(context.Background(), "hold", 200*time.Millisecond, WithKeepAlive(KeepAlive{Fraction: 0.3, MaxHold: 500 * time.Millisecond}))
	require.NoError(t, err)
	<-l.Done()
	assert.ErrorIs(t, l.Err(), ErrExtensionCap)
	assert.False(t, l.Until().After(start.Add(500*time.Millisecond)), "never extended past the maximum hold")
}

func TestKeepAliveStopsOnRelease(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3)
	l, err := m.TryAcquire(ctx, "ka-release", 100*time.Millisecond, WithKeepAlive(KeepAlive{Fraction: 0.2}))
	require.NoError(t, err)
	time.Sleep(250 * time.Millisecond)
	require.NoError(t, l.Err(), "still held thanks to the keep-alive")
	require.NoError(t, l.Release(ctx))
	time.Sleep(100 * time.Millisecond)
	assert.Empty(t, keysOn(t, c, l.Key()), "no renewal raced the release")
	assert.ErrorIs(t, l.Err(), ErrReleased)
}

// A deadline that ends in the middle of a round reports the last round that ran to
// its end: the lock is held elsewhere, not "masters unavailable".
func TestDeadlineMidRoundReportsLastCompleteRound(t *testing.T) {
	c, _ := testCluster(t, 5)
	bg := context.Background()
	for _, s := range c.Servers[:3] {
		require.NoError(t, s.Client().Set(bg, "lock:mid", "someone-else", time.Minute).Err())
	}
	m := managerFor(t, c, WithRetry(100, 150*time.Millisecond, 0))
	ctx, cancel := context.WithTimeout(bg, 250*time.Millisecond)
	defer cancel()
	// Round 1 (at once) sees the lock held; every master then stops answering, so
	// round 2 (at ~150ms) is cut by the deadline with no reply at all.
	time.AfterFunc(100*time.Millisecond, func() {
		for _, s := range c.Servers {
			s.Stop()
		}
	})
	t.Cleanup(func() {
		for _, s := range c.Servers {
			s.Cont()
		}
	})
	_, err := m.Acquire(ctx, "mid", time.Second)
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrNotAcquired)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.ErrorIs(t, err, ErrHeld, "the complete round saw the lock held: %v", err)
	assert.NotErrorIs(t, err, ErrUnavailable)
}

// Bug 4: a TTL with a fraction of a millisecond was floored in PX but counted in
// full in Until.
func TestBug4SubMillisecondTTLIsRefused(t *testing.T) {
	_, m := testCluster(t, 3)
	ctx := context.Background()
	for _, ttl := range []time.Duration{10900 * time.Microsecond, time.Second + time.Nanosecond, 1500 * time.Microsecond} {
		_, err := m.TryAcquire(ctx, "review/4", ttl)
		require.ErrorIs(t, err, ErrInvalidArgument, "%v", ttl)
		assert.Contains(t, err.Error(), "whole number of milliseconds")
	}
	l, err := m.TryAcquire(ctx, "review/4", time.Second) // whole ms: accepted
	require.NoError(t, err)
	assert.ErrorIs(t, l.Extend(ctx, 10900*time.Microsecond), ErrInvalidArgument)
	_, _, err = m.extendToken(ctx, "review/4", l.Token(), 10900*time.Microsecond)
	assert.ErrorIs(t, err, ErrInvalidArgument)
}
