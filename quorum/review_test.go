package quorum

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/faults"
	"github.com/redlock/redlock/internal/redistest"
)

// Regression tests for the bugs an adversarial review reproduced, one per bug,
// named for it. Each failed on the code before its fix.

// doneSlack is how late after Until a Done may be observed: the expiry timer's and
// the observing goroutine's scheduling on a loaded machine. The bug it guards
// against made Done late by most of a node timeout (100ms here).
const doneSlack = 15 * time.Millisecond

// Bug 1: an extension in flight at Until held the lock's mutex, so Done fired only
// when the round gave up, and Until() blocked meanwhile.
func TestBug1DoneFiresAtUntilWhileExtensionInFlight(t *testing.T) {
	t.Parallel()
	s := newScen(t, mutants{}, 3)
	a := s.client("A")
	ctx := context.Background()
	const ttl = 300 * time.Millisecond
	l, err := a.m.TryAcquire(ctx, "review/1", ttl)
	require.NoError(t, err)
	until := l.Until()
	// Two of three masters stop answering: the extension that starts just before
	// Until waits a whole node timeout (100ms) before it fails.
	a.net((*faults.Proxy).Blackhole, "a", "b")
	time.Sleep(time.Until(until.Add(-20 * time.Millisecond)))
	extended := make(chan error, 1)
	go func() { extended <- l.Extend(ctx, ttl) }()
	time.Sleep(5 * time.Millisecond) // the round is in flight

	t0 := time.Now()
	got := l.Until()
	assert.Less(t, time.Since(t0), 5*time.Millisecond, "Until() must not wait for the round in flight")
	assert.Equal(t, until, got, "Until during the round is the deadline before it")

	<-l.Done()
	doneAt := time.Now()
	assert.LessOrEqual(t, doneAt.Sub(until), doneSlack, "Done fired %v after Until", doneAt.Sub(until))
	assert.ErrorIs(t, l.Err(), ErrLost)
	err = <-extended
	assert.ErrorIs(t, err, ErrLost, "an extension that completes after Until does not count")
	a.net((*faults.Proxy).Heal)

	// The keys expire on the masters no earlier than Until: a rival that polls
	// gets the lock only after the first holder's Done fired.
	b := s.client("B")
	acquiredAt := b.pollAcquire(t, ctx, "review/1", ttl, 2*time.Second)
	assert.True(t, doneAt.Before(acquiredAt), "A's Done (%v) fired after B acquired (%v)", doneAt, acquiredAt)
}

// pollAcquire polls TryAcquire every millisecond until it succeeds (failing the
// test after limit) and returns when the successful call returned.
func (c *client) pollAcquire(t *testing.T, ctx context.Context, name string, ttl, limit time.Duration) time.Time {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		l, err := c.m.TryAcquire(ctx, name, ttl)
		if err == nil {
			at := time.Now()
			t.Cleanup(func() { _ = l.Release(context.Background()) })
			return at
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("%s did not get %s within %v", c.name, name, limit)
	return time.Time{}
}

// Bug 1, with the keep-alive: an extension in flight when the validity ends. The
// holder's Done must fire by Until, before anyone else acquires.
func TestBug1KeepAliveDoneFiresBeforeRivalAcquires(t *testing.T) {
	t.Parallel()
	s := newScen(t, mutants{}, 3)
	a, b := s.client("A"), s.client("B")
	ctx := context.Background()
	const ttl = 400 * time.Millisecond
	l, err := a.m.TryAcquire(ctx, "review/1ka", ttl, WithKeepAlive(KeepAlive{Fraction: 0.5}))
	require.NoError(t, err)
	var doneAt, untilAtDone time.Time
	watched := make(chan struct{})
	go func() {
		<-l.Done()
		doneAt = time.Now()
		untilAtDone = l.Until()
		close(watched)
	}()
	// The first extension succeeds; then A loses two masters, so the second one
	// is in flight, for a whole node timeout, when the validity ends.
	<-l.UntilChanged()
	a.net((*faults.Proxy).Blackhole, "a", "b")
	acquiredAt := b.pollAcquire(t, ctx, "review/1ka", ttl, 3*time.Second)
	<-watched
	assert.ErrorIs(t, l.Err(), ErrLost)
	assert.LessOrEqual(t, doneAt.Sub(untilAtDone), doneSlack, "A's Done fired %v after its Until", doneAt.Sub(untilAtDone))
	assert.True(t, doneAt.Before(acquiredAt), "A's Done (%v) must fire before B acquired (%v)", doneAt, acquiredAt)
	a.net((*faults.Proxy).Heal)
	_ = l.Release(ctx)
}

// Bug 3: a fence number repeated when one master lost its data between two
// holders, because the read counted only the masters that held our lock.
func TestBug3FenceDoesNotRepeatWhenOneMasterLosesData(t *testing.T) {
	t.Parallel()
	s := newScen(t, mutants{}, 3)
	cl := s.client("A")
	ctx := context.Background()
	const name = "review/3"
	take := func() int64 {
		t.Helper()
		l, err := cl.m.TryAcquire(ctx, name, 5*time.Second, WithFencing())
		require.NoError(t, err)
		if err := l.Release(ctx); err != nil {
			require.ErrorIs(t, err, ErrPartialRelease, "only the cut-off master may fail the release")
		}
		return l.Fence()
	}
	assert.Equal(t, int64(1), take(), "holder 1 on {a,b,c}")
	cl.net((*faults.Proxy).Blackhole, "c")
	assert.Equal(t, int64(2), take(), "holder 2 on {a,b}")
	cl.net((*faults.Proxy).Heal, "c")
	// a restarts empty; another owner's stale key on b keeps holder 3 off it, so
	// holder 3 wins {a,c}: a says 0, c says 1, and only b, which answers but is
	// not ours, still knows 2.
	faults.KillRestart(s.server("a"), 0, false)
	require.NoError(t, s.server("b").Client().Set(ctx, cl.m.Key(name), "rl1.someone-else", 5*time.Second).Err())
	l, err := cl.m.TryAcquire(ctx, name, 5*time.Second, WithFencing())
	require.NoError(t, err)
	defer func() { _ = l.Release(ctx) }()
	assert.Equal(t, 2, l.Votes().Votes, "holder 3 holds {a,c}")
	assert.Greater(t, l.Fence(), int64(2), "holder 3 must not get fence 2 again")
}

// Bug 4: a TTL with a fraction of a millisecond was floored in PX but counted in
// full in Until.
func TestBug4SubMillisecondTTLIsRefused(t *testing.T) {
	_, m := testCluster(t, 3)
	ctx := context.Background()
	for _, ttl := range []time.Duration{10900 * time.Microsecond, time.Second + time.Nanosecond, 1500 * time.Microsecond} {
		_, err := m.TryAcquire(ctx, "review/4", ttl)
		require.ErrorIs(t, err, ErrInvalidTTL, "%v", ttl)
		assert.Contains(t, err.Error(), "whole number of milliseconds")
	}
	l, err := m.TryAcquire(ctx, "review/4", time.Second) // whole ms: accepted
	require.NoError(t, err)
	assert.ErrorIs(t, l.Extend(ctx, 10900*time.Microsecond), ErrInvalidTTL)
	_, _, err = m.ExtendToken(ctx, "review/4", l.Token(), 10900*time.Microsecond)
	assert.ErrorIs(t, err, ErrInvalidTTL)
}

// setCalls returns how many SET commands a master has run.
func setCalls(t *testing.T, sv *redistest.Server) int {
	t.Helper()
	info, err := sv.Client().Info(context.Background(), "commandstats").Result()
	require.NoError(t, err)
	v := infoField(info, "cmdstat_set")
	if v == "" {
		return 0
	}
	calls, _, _ := strings.Cut(strings.TrimPrefix(v, "calls="), ",")
	n, err := strconv.Atoi(calls)
	require.NoError(t, err)
	return n
}

// Bug 5: "some votes but no quorum" was read as a split vote even when another
// owner held a bare majority, so the retry delay dropped to a millisecond and a
// waiter hammered the masters.
func TestBug5SplitVoteShortcutDoesNotSpinAgainstBareMajority(t *testing.T) {
	c, m := testCluster(t, 5, WithRetry(1000, 100*time.Millisecond, 0))
	ctx := context.Background()
	for _, sv := range c.Servers[:3] {
		require.NoError(t, sv.Client().Set(ctx, m.Key("review/5"), "rl1.holder", time.Minute).Err())
	}
	before := setCalls(t, c.Servers[4])
	wctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_, err := m.Acquire(wctx, "review/5", time.Second)
	require.ErrorIs(t, err, ErrNotAcquired)
	rounds := setCalls(t, c.Servers[4]) - before
	t.Logf("%d rounds in 1s with a 100ms retry delay", rounds)
	assert.LessOrEqual(t, rounds, 15, "the policy allows about 10 rounds")
}

// A true split vote (our value on 2 of 5, two others on 2 and 1) is still retried
// soon, and never twice in a row.
func TestSplitVoteIsRecognisedOnlyWhenNoValueCanHoldAQuorum(t *testing.T) {
	res := func(outs ...any) *RoundError {
		rep := Report{Op: opAcquire, Quorum: 3}
		for i := 0; i < len(outs); i += 2 {
			rep.Nodes = append(rep.Nodes, NodeResult{Outcome: outs[i].(Outcome), holder: outs[i+1].(string)})
		}
		rep.Votes = rep.count(OutcomeOK)
		return &RoundError{Report: rep, Kind: ErrHeld}
	}
	ok, fo, er := OutcomeOK, OutcomeForeign, OutcomeError
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"three contenders", res(ok, "", ok, "", fo, "x", fo, "x", fo, "y"), true},
		{"another value on a bare majority", res(ok, "", ok, "", fo, "x", fo, "x", fo, "x"), false},
		{"unknown values may be one holder's", res(ok, "", ok, "", fo, "", fo, "", fo, ""), false},
		{"a master down may hold the other value", res(ok, "", ok, "", fo, "x", fo, "x", er, ""), false},
		{"no vote at all", res(fo, "x", fo, "x", fo, "y", fo, "y", fo, "z"), false},
		{"not a round error", ErrHeld, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, splitVote(tt.err)) })
	}
}

// SET NX GET tells whose value holds the key where ours was not set, on the wire
// fast path (Redis >= 7); the go-redis path leaves it unknown.
func TestSetNXGetLearnsTheHolder(t *testing.T) {
	c, m := testCluster(t, 3)
	ctx := context.Background()
	require.NoError(t, c.Servers[1].Client().Set(ctx, "lock:learn", "rl1.theirs", time.Minute).Err())
	rep := m.wireRound(ctx, opAcquire, "lock:learn", wireSet, "rl1.ours", "", 60000)
	assert.Equal(t, []Outcome{OutcomeOK, OutcomeForeign, OutcomeOK}, outcomes(rep))
	assert.Equal(t, "rl1.theirs", rep.Nodes[1].holder)
	assert.Empty(t, rep.Nodes[0].holder)
	assert.Equal(t, "rl1.ours", c.Servers[0].Client().Get(ctx, "lock:learn").Val())
	assert.Equal(t, "rl1.theirs", c.Servers[1].Client().Get(ctx, "lock:learn").Val(), "not overwritten")
}

// infoOf returns INFO section of a real server.
func infoOf(t *testing.T, sv *redistest.Server, section string) string {
	t.Helper()
	s, err := sv.Client().Info(context.Background(), section).Result()
	require.NoError(t, err)
	return s
}

// Bug 7: the restart quarantine counted from the reconnect, not from the restart.
// A fresh start is dated by its uptime; only a replica promoted behind the address
// (REPLICAOF NO ONE) is quarantined from the moment it is seen.
func TestBug7QuarantineCountsFromTheRestart(t *testing.T) {
	t.Parallel()
	c := redistest.Start(t, 2, redistest.Options{})
	fresh, promotedSv := c.Servers[0], c.Servers[1]
	// Make the second server a replica of the first, then promote it.
	ctx := context.Background()
	require.NoError(t, promotedSv.Client().Do(ctx, "REPLICAOF", "127.0.0.1", strconv.Itoa(fresh.Port)).Err())
	require.Eventually(t, func() bool {
		return strings.Contains(infoOf(t, promotedSv, "replication"), "master_link_status:up")
	}, 10*time.Second, 20*time.Millisecond)
	require.NoError(t, promotedSv.Client().Do(ctx, "REPLICAOF", "NO", "ONE").Err())
	assert.False(t, promoted(infoOf(t, fresh, "replication")), "a fresh start has second_repl_offset:-1")
	assert.True(t, promoted(infoOf(t, promotedSv, "replication")), "a promoted replica keeps its old master's offset")

	const window = 2 * time.Second
	// The servers' INFO with their uptime faked: started 4s ago, and a run_id the
	// node has not seen before (it restarted while the client was idle).
	aged := func(info string) string {
		return strings.Replace(info, "uptime_in_seconds:"+infoField(info, "uptime_in_seconds"), "uptime_in_seconds:4", 1)
	}
	now := time.Now()
	n := &node{runID: "an-older-run"}
	n.observe(aged(infoOf(t, fresh, "server")), infoOf(t, fresh, "replication"), now, window)
	assert.True(t, n.quarantinedUntil(now).IsZero(), "restarted 4s ago with a 2s window: quarantine over")

	n = &node{runID: "an-older-run"}
	n.observe(aged(infoOf(t, promotedSv, "server")), infoOf(t, promotedSv, "replication"), now, window)
	assert.Equal(t, now.Add(window), n.quarantinedUntil(now), "a promoted replica cannot be dated: now + window")

	n = &node{}
	n.observe(infoOf(t, fresh, "server"), infoOf(t, fresh, "replication"), now, time.Minute)
	assert.False(t, n.quarantinedUntil(now).IsZero(), "first sight of a master younger than the window")
	assert.True(t, n.quarantinedUntil(now).Before(now.Add(time.Minute)), "counted from its start, not from now")
}

// Bug 7 end to end: a master restarted while the client was idle is not
// quarantined for a whole window after the client reconnects; a promoted replica
// behind the same address is.
func TestBug7IdleClientAfterRestart(t *testing.T) {
	t.Parallel()
	s := newScen(t, mutants{}, 3)
	const window = 2 * time.Second
	cl := s.client("A", WithRestartQuarantine(window))
	ctx := context.Background()
	// Meet every master once they are older than the window.
	time.Sleep(window + 1100*time.Millisecond)
	l, err := cl.m.TryAcquire(ctx, "review/7", time.Second)
	require.NoError(t, err)
	require.NoError(t, l.Release(ctx))
	require.True(t, cl.m.metEvery())
	require.Empty(t, cl.m.Quarantine())

	faults.KillRestart(s.server("a"), 0, false)
	time.Sleep(window + 1100*time.Millisecond) // idle while a restarts and ages
	l, err = cl.m.TryAcquire(ctx, "review/7", time.Second)
	require.NoError(t, err)
	assert.Equal(t, 3, l.Votes().Votes, "a restarted more than a window ago votes at once")
	assert.Empty(t, cl.m.Quarantine())
	require.NoError(t, l.Release(ctx))

	// Now a replica of b, promoted, takes b's place behind the address.
	b := s.server("b")
	repl := redistest.StartOne(t, "b2", redistest.Options{})
	require.NoError(t, repl.Client().Do(ctx, "REPLICAOF", "127.0.0.1", strconv.Itoa(b.Port)).Err())
	require.Eventually(t, func() bool {
		return strings.Contains(infoOf(t, repl, "replication"), "master_link_status:up")
	}, 10*time.Second, 20*time.Millisecond)
	require.NoError(t, repl.Client().Do(ctx, "REPLICAOF", "NO", "ONE").Err())
	time.Sleep(window + 1100*time.Millisecond) // older than the window too
	cl.net(func(p *faults.Proxy) { p.SetUpstream(repl.Addr()); p.Reset() }, "b")
	seen := time.Now()
	l, err = cl.m.TryAcquire(ctx, "review/7", time.Second)
	require.NoError(t, err)
	defer func() { _ = l.Release(ctx) }()
	q := cl.m.Quarantine()
	require.Contains(t, q, "b", "the promoted replica is quarantined")
	assert.WithinDuration(t, seen.Add(window), q["b"], time.Second)
	assert.Equal(t, 2, l.Votes().Votes)
}

// Bug 8: the keep-alive read l.ttl without the mutex while Extend wrote it. Only
// the race detector sees it: the README's test command runs this package with -race.
func TestBug8NoRaceBetweenKeepAliveAndExtend(t *testing.T) {
	_, m := testCluster(t, 3)
	ctx := context.Background()
	l, err := m.TryAcquire(ctx, "review/8", 400*time.Millisecond, WithKeepAlive(KeepAlive{Fraction: 0.1}))
	require.NoError(t, err)
	deadline := time.Now().Add(500 * time.Millisecond)
	for time.Now().Before(deadline) {
		require.NoError(t, l.Extend(ctx, 400*time.Millisecond))
		_ = l.Until()
		time.Sleep(5 * time.Millisecond)
	}
	require.NoError(t, l.Release(ctx))
}

// Bug 9: with a Fraction near 1 the next extension was scheduled frac*TTL after the
// last one returned, past Until once the drift is subtracted: the lock was lost.
func TestBug9KeepAliveFractionNearOneKeepsTheLock(t *testing.T) {
	_, m := testCluster(t, 3, WithNodeTimeout(50*time.Millisecond))
	ctx := context.Background()
	l, err := m.TryAcquire(ctx, "review/9", 300*time.Millisecond, WithKeepAlive(KeepAlive{Fraction: 0.99}))
	require.NoError(t, err)
	select {
	case <-l.Done():
		t.Fatalf("lost the lock: %v", l.Err())
	case <-time.After(1500 * time.Millisecond):
	}
	require.NoError(t, l.Err())
	require.NoError(t, l.Release(ctx))
}

// Bug 10: the wake hub kept one confirmed-subscription entry per lock name when a
// master was down while the name's channel was dropped; they also looked subscribed.
func TestBug10WakeHubForgetsAMasterThatDropped(t *testing.T) {
	c, m := testCluster(t, 3)
	h := m.hub()
	var unregs []func()
	for i := range 300 {
		_, unreg := h.register(m.Key("review/10/"+strconv.Itoa(i)), "")
		unregs = append(unregs, unreg)
	}
	require.Eventually(t, func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return len(h.confirmed) == 2*300 // "<key>:wake" and "<key>:wake:any" for each
	}, 10*time.Second, 10*time.Millisecond)
	c.Servers[0].Kill()
	for _, u := range unregs {
		u()
	}
	// The names have been idle for longer than the linger: the hub drops them.
	h.mu.Lock()
	for ch := range h.idle {
		h.idle[ch] = time.Now().Add(-2 * wakeLinger)
	}
	h.mu.Unlock()
	h.kickAll()
	require.Eventually(t, func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return len(h.confirmed) == 0
	}, 10*time.Second, 10*time.Millisecond, "no channel is wanted: nothing may look subscribed")
	c.Servers[0].Restart(false)
}

// Found while testing bug 3: on the wire fast path, one master that does not answer
// made every master read after it fail too (a read past the deadline fails without
// looking at the reply waiting in the socket), so one hung master stopped all locking.
func TestWireRoundCountsRepliesAfterAHungMaster(t *testing.T) {
	t.Parallel()
	s := newScen(t, mutants{}, 3)
	cl := s.client("A")
	ctx := context.Background()
	cl.net((*faults.Proxy).Blackhole, "a")
	l, err := cl.m.TryAcquire(ctx, "review/hung", time.Second)
	require.NoError(t, err)
	assert.Equal(t, []Outcome{OutcomeError, OutcomeOK, OutcomeOK}, outcomes(&Report{Nodes: l.Votes().Nodes}))
	require.NoError(t, l.Extend(ctx, time.Second), "extend too")
	cl.net((*faults.Proxy).Heal, "a")
	require.NoError(t, l.Release(ctx))
}
