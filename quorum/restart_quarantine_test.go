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
	require.Empty(t, cl.m.quarantineEnds())

	faults.KillRestart(s.server("a"), 0, false)
	time.Sleep(window + 1100*time.Millisecond) // idle while a restarts and ages
	// a votes at once: within half the window, far short of the whole window a
	// quarantine counted from the reconnect would take. The first round may
	// end at its quorum (b and c) while a's new connection is still being
	// dialled on a loaded machine (not awaited: no vote, and no quarantine);
	// the next one finds the connection open.
	var votes int
	for deadline := time.Now().Add(window / 2); votes < 3 && time.Now().Before(deadline); {
		l, err = cl.m.TryAcquire(ctx, "review/7", time.Second)
		require.NoError(t, err)
		votes = l.Votes().Votes
		assert.Empty(t, cl.m.quarantineEnds())
		require.NoError(t, l.Release(ctx))
	}
	assert.Equal(t, 3, votes, "a restarted more than a window ago votes at once")

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
	q := cl.m.quarantineEnds()
	require.Contains(t, q, "b", "the promoted replica is quarantined")
	assert.WithinDuration(t, seen.Add(window), q["b"], time.Second)
	assert.Equal(t, 2, l.Votes().Votes)
}
