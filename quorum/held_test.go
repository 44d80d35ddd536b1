package quorum

import (
	"context"
	"testing"
	"time"

	"github.com/redlock/redlock/internal/keyspace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ExtendHeld and ReleaseHeld resume every primitive from its token alone, as
// a script between `redlock acquire` and `redlock release` does, and never
// touch another holder.
func TestHeldExtendAndReleaseByToken(t *testing.T) {
	ctx := context.Background()
	_, m := testCluster(t, 3)
	ttl := 2 * time.Second
	tests := []struct {
		name  string
		names []string
		take  func() (*Lock, error)
		other func() (*Lock, error) // a second holder that must survive ours
	}{
		{"plain", []string{"h-plain"}, func() (*Lock, error) { return m.TryAcquire(ctx, "h-plain", ttl) }, nil},
		{"multi", []string{"h-b", "h-a"}, func() (*Lock, error) { return m.tryMulti(ctx, []string{"h-a", "h-b"}, ttl) }, nil},
		{"permit", []string{"h-sem"}, func() (*Lock, error) { return m.TryAcquire(ctx, "h-sem", ttl, withPermits(3)) },
			func() (*Lock, error) { return m.TryAcquire(ctx, "h-sem", ttl, withPermits(3)) }},
		{"shared", []string{"h-sh"}, func() (*Lock, error) { return m.TryAcquire(ctx, "h-sh", ttl, withShared()) },
			func() (*Lock, error) { return m.TryAcquire(ctx, "h-sh", ttl, withShared()) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var other *Lock
			if tt.other != nil {
				var err error
				other, err = tt.other()
				require.NoError(t, err)
			}
			l, err := tt.take()
			require.NoError(t, err)
			until, rep, err := m.extendHeld(ctx, tt.names, l.Token(), 5*time.Second)
			require.NoError(t, err)
			assert.Equal(t, 3, rep.Votes)
			assert.True(t, until.After(l.Until()), "extended past the first deadline")

			_, err = m.releaseHeld(ctx, tt.names, l.Token())
			require.NoError(t, err)
			_, _, err = m.extendHeld(ctx, tt.names, l.Token(), 5*time.Second)
			assert.ErrorIs(t, err, ErrLost, "released: nothing left to extend")
			if other != nil {
				_, _, err := m.extendHeld(ctx, tt.names, other.Token(), 5*time.Second)
				assert.NoError(t, err, "the other holder is untouched")
				require.NoError(t, other.Release(ctx))
			}
		})
	}
}

func TestHeldRefusesWhatTheTokenDoesNotHold(t *testing.T) {
	ctx := context.Background()
	_, m := testCluster(t, 3)
	multi, err := m.tryMulti(ctx, []string{"r-a", "r-b", "r-c"}, time.Second)
	require.NoError(t, err)
	plain, err := m.TryAcquire(ctx, "r-p", time.Second)
	require.NoError(t, err)
	_, _, err = m.extendHeld(ctx, []string{"r-a", "r-b"}, multi.Token(), time.Second)
	assert.ErrorIs(t, err, ErrInvalidArgument, "a multi-name token covers every name it was taken with")
	_, err = m.releaseHeld(ctx, []string{"r-a", "r-a", "r-b"}, multi.Token())
	assert.ErrorIs(t, err, ErrInvalidArgument)
	_, _, err = m.extendHeld(ctx, []string{"r-p", "r-q"}, plain.Token(), time.Second)
	assert.ErrorIs(t, err, ErrInvalidArgument, "a plain token holds one name")
	_, _, err = m.extendHeld(ctx, []string{"r-p"}, plain.Token(), 0)
	assert.Error(t, err, "the TTL is checked before any I/O")
}

// A force-expire of a permit or a leadership deletes what was seen, never what
// came after, and wakes the primitive's holder (the leader learns it lost).
func TestForceExpireListedPrimitiveKeys(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3)
	p, err := m.TryAcquire(ctx, "fx-sem", 5*time.Second, withPermits(2))
	require.NoError(t, err)
	seenOf := func(key string) map[string]keyspace.Seen {
		out := map[string]keyspace.Seen{}
		for name, v := range keysOn(t, c, key) {
			out[name] = keyspace.Seen{Type: "string", Value: v}
		}
		return out
	}
	seen := seenOf("lock:fx-sem:permit:0")
	rep, err := m.forceExpireListed(ctx, "fx-sem:permit:0", seen)
	require.NoError(t, err)
	assert.Equal(t, 3, rep.Votes)
	assert.Empty(t, keysOn(t, c, "lock:fx-sem:permit:0"))
	assert.ErrorIs(t, p.Extend(ctx, time.Second), ErrLost)

	q, err := m.TryAcquire(ctx, "fx-sem", 5*time.Second, withPermits(2))
	require.NoError(t, err)
	rep, err = m.forceExpireListed(ctx, "fx-sem:permit:0", seen)
	require.NoError(t, err)
	assert.Equal(t, 0, rep.Votes, "the permit changed hands since it was seen: kept")
	assert.Len(t, keysOn(t, c, "lock:fx-sem:permit:0"), 3)
	require.NoError(t, q.Release(ctx))

	e, err := m.Election("fx-el")
	require.NoError(t, err)
	lead, err := e.Campaign(ctx, "v", 5*time.Second, WithLossWatch())
	require.NoError(t, err)
	rep, err = m.forceExpireListed(ctx, "fx-el:leader", seenOf("lock:fx-el:leader"))
	require.NoError(t, err)
	assert.Equal(t, 3, rep.Votes)
	select {
	case <-lead.Done():
	case <-time.After(2 * time.Second):
		t.Fatal("the leader did not learn it was deposed")
	}
	_, err = e.Leader(ctx)
	assert.ErrorIs(t, err, ErrNoLeader)
	_, err = m.forceExpireListed(ctx, "fx-el:leader:term", map[string]keyspace.Seen{"a": {Type: "hash"}})
	assert.ErrorIs(t, err, ErrInvalidArgument, "a leader's record goes with its leadership")
}
