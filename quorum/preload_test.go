package quorum

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/faults"
	"github.com/redlock/redlock/internal/redistest"
)

// TestBugReleaseWithALostNoscriptReplyLeavesTheKey: a master whose script cache
// was emptied (a restart, SCRIPT FLUSH) before the client's connection to it was
// opened, and whose replies are then lost. The release's EVALSHA got NOSCRIPT
// there; the reply never came back, so the EVAL that would have followed was
// never sent, and the holder's key stayed on that master until its TTL. Each new
// connection now loads the scripts that end a hold in its handshake: the EVALSHA
// runs, and only its reply is lost.
func TestBugReleaseWithALostNoscriptReplyLeavesTheKey(t *testing.T) {
	for _, fair := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "fair"}[fair]
		t.Run(name, func(t *testing.T) {
			s := newScen(t, mutants{}, 3)
			a := s.client("A", WithNodeTimeout(200*time.Millisecond))
			ctx := context.Background()
			var opts []LockOption
			if fair {
				opts = append(opts, WithFair())
			}
			l, err := a.m.TryAcquire(ctx, "preload/"+name, time.Minute, opts...)
			require.NoError(t, err)
			key := l.Key()
			// c's scripts are flushed and the client's connection to c is reset:
			// the next round (SET NX alone, no script; never released, which
			// would load release.lua on c) dials a new one.
			require.NoError(t, s.server("c").Client().ScriptFlush(ctx).Err())
			a.net((*faults.Proxy).Reset, "c")
			i := 0
			require.Eventually(t, func() bool {
				i++
				o, err := a.m.TryAcquire(ctx, fmt.Sprintf("preload/other%d", i), time.Minute)
				return err == nil && o.Votes().Nodes[2].Outcome == OutcomeOK
			}, 5*time.Second, 20*time.Millisecond, "a new connection to c")
			a.net((*faults.Proxy).LoseReplies, "c")
			require.ErrorIs(t, l.Release(ctx), ErrPartialRelease, "a and b released, c did not answer")
			assert.Eventually(t, func() bool {
				_, held := keysOn(t, s.c, key)["c"]
				return !held
			}, 2*time.Second, 10*time.Millisecond, "the key is still on c: the release never ran there")
			a.net((*faults.Proxy).Heal, "c")
		})
	}
}

// A user not granted SCRIPT EXISTS nor SCRIPT LOAD: every new connection's preload
// is refused, and
// the connection opens all the same; the scripts then run by EVAL after NOSCRIPT,
// as before the preload, and nothing is left on the masters.
func TestPreloadRefusedByTheACLIsNoFailure(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t, 3, redistest.Options{})
	for _, s := range c.Servers {
		require.NoError(t, s.Client().Do(ctx, "ACL", "SETUSER", "noload", "on", ">pw", "~*", "&*", "+@all", "-script|load", "-script|exists").Err())
		require.NoError(t, s.Client().ScriptFlush(ctx).Err())
	}
	m := managerVia(t, c, func(_ int, n *Node) { n.Username, n.Password = "noload", "pw" })
	for _, opts := range [][]LockOption{nil, {WithFair()}} {
		l, err := m.TryAcquire(ctx, "noload", time.Minute, opts...)
		require.NoError(t, err)
		require.NoError(t, l.Extend(ctx, time.Minute))
		require.NoError(t, l.Release(ctx))
		assert.Empty(t, keysOn(t, c, l.Key()))
	}
	for _, s := range c.Servers {
		log, err := s.Client().Do(ctx, "ACL", "LOG").Slice()
		require.NoError(t, err)
		assert.NotEmpty(t, log, "%s: the preload was not refused (the test sets nothing up)", s.Name)
	}
	// Granted EXISTS, refused LOAD: the second step's refusals are read in step.
	for _, s := range c.Servers {
		require.NoError(t, s.Client().Do(ctx, "ACL", "SETUSER", "noload", "+script|exists").Err())
		require.NoError(t, s.Client().ScriptFlush(ctx).Err())
	}
	m2 := managerVia(t, c, func(_ int, n *Node) { n.Username, n.Password = "noload", "pw" })
	l, err := m2.TryAcquire(ctx, "noload2", time.Minute)
	require.NoError(t, err)
	require.NoError(t, l.Release(ctx))
	assert.Empty(t, keysOn(t, c, l.Key()))
}

// The preload loads a script only where the master lacks it: the first
// connection to fresh masters loads each preloaded script once; a second
// Manager's connections ask SCRIPT EXISTS and load nothing (an embedded server
// compiles every SCRIPT LOAD anew); after SCRIPT FLUSH, a new connection loads
// them again.
func TestPreloadLoadsOnlyWhatTheMasterLacks(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t, 3, redistest.Options{})
	for _, s := range c.Servers {
		require.NoError(t, s.Client().ScriptFlush(ctx).Err())
		require.NoError(t, s.Client().ConfigResetStat(ctx).Err())
	}
	loads := func() []int {
		var out []int
		for _, s := range c.Servers {
			out = append(out, commandCalls(t, s, "script|load")["script|load"])
		}
		return out
	}
	n := len(preloaded)
	acquire := func() {
		m := managerFor(t, c)
		l, err := m.TryAcquire(ctx, "preload-count", time.Minute)
		require.NoError(t, err)
		require.NoError(t, l.Release(ctx))
	}
	acquire()
	assert.Equal(t, []int{n, n, n}, loads(), "the first connections load every script once")
	acquire()
	assert.Equal(t, []int{n, n, n}, loads(), "a second Manager's connections load nothing")
	require.NoError(t, c.Servers[1].Client().ScriptFlush(ctx).Err())
	acquire()
	assert.Equal(t, []int{n, 2 * n, n}, loads(), "after SCRIPT FLUSH on b, b's new connection loads them again")
}
