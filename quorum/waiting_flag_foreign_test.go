package quorum

// Attacks on the waiting flag (release.lua): what else lives at or near its key,
// and what the listings show. The flag was first "<lock key> waiting", which is
// another library's lock on the resource "<name> waiting"; it is now
// "<lock key> waiting:queue", a queue key's ending, which is this tool's
// (SAFETY.md, key layout).

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// TestBugFlagReleaseDeletesAForeignLock: the README promises that foreign keys
// whose names break this tool's name rule ("lock:nightly report", written by
// another library with the same prefix) are listed and can be force-expired, and
// that redsync, node-redlock and others exclude each other with this tool on the
// same keys. Another library's lock on the resource "nightly waiting" is the key
// "lock:nightly waiting": it was the waiting flag of our lock "nightly". Our
// plain release of "nightly" must not delete that lock (before the flag, no
// release ever deleted anything but its own value: a queue key of another type
// was "left as it is").
func TestBugFlagReleaseDeletesAForeignLock(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3)
	foreign := m.Key("nightly waiting")
	const token = "redsync-token-0123456789"
	for _, s := range c.Servers {
		ok, err := s.Client().SetNX(ctx, foreign, token, time.Minute).Result()
		require.NoError(t, err)
		require.True(t, ok, "the other library holds %q", foreign)
	}
	l, err := m.Acquire(ctx, "nightly", time.Minute)
	require.NoError(t, err)
	require.NoError(t, l.Release(ctx))
	assert.Equal(t, allOf(c, token), keysOn(t, c, foreign),
		"our release of %q deleted another library's lock %q: its holder no longer excludes anyone", "nightly", foreign)
}

// TestBugFlagWaiterOverwritesAForeignLock: a waiter of our lock "nightly" sets
// the flag with SET ... PX (no NX, no type check) wherever it lives shorter than
// the waiter's marker: another library's lock at "lock:nightly waiting" got the
// value "1" and a longer TTL. Its holder's compare-and-delete then fails, and the
// key later vanishes with our next release.
func TestBugFlagWaiterOverwritesAForeignLock(t *testing.T) {
	ctx := context.Background()
	c, holder := testCluster(t, 3)
	foreign := holder.Key("nightly waiting")
	const token = "node-redlock-token-abcdef"
	for _, s := range c.Servers {
		ok, err := s.Client().SetNX(ctx, foreign, token, 5*time.Second).Result()
		require.NoError(t, err)
		require.True(t, ok)
	}
	l, err := holder.Acquire(ctx, "nightly", time.Minute)
	require.NoError(t, err)
	w := managerFor(t, c, WithRetry(1000, 5*time.Second, 0), WithNodeTimeout(time.Second))
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		wl, err := w.Acquire(wctx, "nightly", time.Minute)
		if err == nil {
			_ = wl.Release(ctx)
		}
	}()
	time.Sleep(500 * time.Millisecond) // the waiter failed, marked, sleeps
	got := keysOn(t, c, foreign)
	cancel()
	<-done
	_ = l.Release(ctx)
	assert.Equal(t, allOf(c, token), got,
		"a waiter of %q overwrote another library's lock %q", "nightly", foreign)
}

// TestBugFlagHidesAForeignLockFromListings: the same foreign lock, held, is not
// listed (the listing skipped every key ending " waiting", whatever its value), and
// force-expire refuses its name, although the README says both work on foreign
// keys that break the name rule ("lock:nightly report").
func TestBugFlagHidesAForeignLockFromListings(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3)
	for _, name := range []string{"nightly report", "nightly waiting"} {
		for _, s := range c.Servers {
			require.NoError(t, s.Client().Set(ctx, m.Key(name), "rl-foreign-token", time.Minute).Err())
		}
	}
	lst, err := m.inspect(ctx, "")
	require.NoError(t, err)
	var names []string
	for _, li := range lst.Locks {
		names = append(names, li.Name)
	}
	assert.ElementsMatch(t, []string{"nightly report", "nightly waiting"}, names, "a held foreign lock is not listed")
}

// allOf is keysOn's answer when every master holds v.
func allOf(c *redistest.Cluster, v string) map[string]string {
	out := map[string]string{}
	for _, s := range c.Servers {
		out[s.Name] = v
	}
	return out
}

// TestBugFlagSuffixMatchedOnThePrefixedKey: the listing skips side keys by the
// suffix of the whole key, prefix included (list_resp.go), not of the
// name. A key prefix may hold spaces (topology refuses only control
// characters), so with the prefix "team " our own lock named "waiting" (a valid
// name) is the key "team waiting" and is never listed, though held. (The same
// holds, before the flag, for a lock named "queue" under the default prefix
// "lock:": the key "lock:queue".)
func TestBugFlagSuffixMatchedOnThePrefixedKey(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct{ prefix, name string }{{"team ", "waiting"}, {"lock:", "queue"}} {
		t.Run(tt.prefix+tt.name, func(t *testing.T) {
			c, _ := testCluster(t, 3)
			m := managerFor(t, c, WithKeyPrefix(tt.prefix))
			require.NoError(t, ValidateName(tt.name))
			l, err := m.Acquire(ctx, tt.name, time.Minute)
			require.NoError(t, err)
			defer func() { _ = l.Release(ctx) }()
			lst, err := m.inspect(ctx, "")
			require.NoError(t, err)
			var names []string
			for _, li := range lst.Locks {
				names = append(names, li.Name)
			}
			assert.Equal(t, []string{tt.name}, names, "our held lock %q (key %q) is not listed", tt.name, l.key)
		})
	}
}
