package quorum

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redlock/redlock/internal/keyspace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInspectStates(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 5)
	set := func(key, value string, ttl time.Duration, idx ...int) {
		t.Helper()
		for _, i := range idx {
			require.NoError(t, c.Servers[i].Client().Set(ctx, key, value, ttl).Err())
		}
	}

	ours, err := m.TryAcquire(ctx, "ours", 10*time.Second, WithLockOwner("job-7"))
	require.NoError(t, err)
	set("lock:redsync", "aGVsbG8gd29ybGQgaGVsbA==", 10*time.Second, 0, 1, 2, 3, 4)
	set("lock:partial", "0123456789abcdef0123456789abcdef", 10*time.Second, 0, 1)
	set("lock:contested", "11111111-2222-3333-4444-555555555555", 10*time.Second, 0, 1)
	set("lock:contested", "aaaaaaaa-2222-3333-4444-555555555555", 10*time.Second, 2, 3)
	set("lock:nottl", "leftover", 0, 3)
	set("lock:ours:fence", "17", 0, 0, 1, 2)
	set("lock:ours:queue", "q", 0, 0, 1)
	set("unrelated", "zzz", 0, 0, 1, 2, 3, 4)
	for _, i := range []int{0, 1, 2} {
		require.NoError(t, c.Servers[i].Client().HSet(ctx, "lock:redisson", "8743c9c0-0795-4907-87fd-6c719a6b4586:1", 1).Err())
		require.NoError(t, c.Servers[i].Client().PExpire(ctx, "lock:redisson", 10*time.Second).Err())
	}

	lst, err := m.inspect(ctx, "")
	require.NoError(t, err)
	assert.Equal(t, 5, lst.Answered())
	assert.Equal(t, 3, lst.Quorum)
	names := []string{}
	for _, l := range lst.Locks {
		names = append(names, l.Name)
	}
	assert.Equal(t, []string{"contested", "nottl", "ours", "partial", "redisson", "redsync"}, names, "side keys, foreign prefixes and absent names are not listed")

	tests := []struct {
		name     string
		state    lockState
		votes    int
		library  string
		validity bool // remaining validity > 0
		fence    int64
	}{
		{"ours", stateHeld, 5, "redlock", true, 17},
		{"redsync", stateHeld, 5, "redsync", true, 0},
		{"partial", statePartial, 2, "node-redlock", false, 0},
		{"contested", stateContested, 2, "redlock.net/pottery", false, 0},
		{"nottl", stateOrphaned, 1, "unknown", false, 0},
		{"redisson", stateOrphaned, 0, "redisson", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			li := lst.Lock(tt.name)
			require.NotNil(t, li)
			assert.Equal(t, "lock:"+tt.name, li.Key)
			assert.Equal(t, tt.state, li.State)
			assert.Equal(t, tt.votes, li.Votes)
			assert.Equal(t, tt.library, li.Library)
			assert.Equal(t, tt.validity, li.Validity > 0, "validity %v", li.Validity)
			assert.Equal(t, tt.fence, li.Fence)
			assert.Len(t, li.Masters, 5)
			assert.Equal(t, 3, li.Quorum)
			assert.Equal(t, 5, li.Total)
		})
	}

	li := lst.Lock("ours")
	require.NotNil(t, li.Owner)
	assert.Equal(t, "job-7", li.Owner.Label)
	assert.Equal(t, ours.Token(), li.Value)
	assert.Greater(t, li.Validity, 8*time.Second)
	assert.LessOrEqual(t, li.Validity, 10*time.Second-m.DriftBudget(10*time.Second))
	assert.WithinDuration(t, time.Now().Add(li.Validity), li.Deadline(), 2*time.Second)
	for _, mv := range li.Masters {
		assert.True(t, mv.Present)
		assert.Equal(t, "string", mv.Type)
		assert.Greater(t, mv.PTTL, 8*time.Second)
	}
	noTTL := lst.Lock("nottl")
	assert.Equal(t, time.Duration(-1), noTTL.Masters[3].PTTL)
	assert.False(t, noTTL.Masters[0].Present)
	assert.Equal(t, "hash", lst.Lock("redisson").Masters[0].Type)
	assert.Equal(t, []int{5, 5, 4, 4, 2}, keyCounts(lst))
}

func keyCounts(l *lockListing) []int {
	out := []int{}
	for _, m := range l.Masters {
		out = append(out, m.Keys)
	}
	return out
}

func TestInspectMatchAndManyKeys(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3)
	for _, s := range c.Servers {
		pipe := s.Client().Pipeline()
		for i := 0; i < 2500; i++ { // more than one SCAN batch
			pipe.Set(ctx, "lock:bulk/"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+time.Duration(i).String(), "v", time.Minute)
		}
		pipe.Set(ctx, "lock:billing/1", "v", time.Minute)
		pipe.Set(ctx, "lock:billing/2", "v", time.Minute)
		_, err := pipe.Exec(ctx)
		require.NoError(t, err)
	}
	tests := []struct {
		match string
		want  int
	}{
		{"billing/*", 2},
		{"billing/1", 1},
		{"nothing*", 0},
		{"", 2502},
	}
	for _, tt := range tests {
		t.Run(tt.match, func(t *testing.T) {
			lst, err := m.inspect(ctx, tt.match)
			require.NoError(t, err)
			assert.Len(t, lst.Locks, tt.want)
			for _, l := range lst.Locks {
				assert.Equal(t, stateHeld, l.State, l.Name)
			}
		})
	}
}

func TestInspectWithMastersDown(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 5)
	_, err := m.TryAcquire(ctx, "job", 10*time.Second)
	require.NoError(t, err)

	c.Servers[1].Kill()
	c.Servers[3].Stop()
	t.Cleanup(c.Servers[3].Cont)
	start := time.Now()
	lst, err := m.inspect(ctx, "")
	require.NoError(t, err, "a quorum answered")
	assert.Less(t, time.Since(start), 5*time.Second, "a paused master must not hold the listing")
	assert.Equal(t, 3, lst.Answered())
	assert.False(t, lst.Masters[1].Answered)
	assert.Contains(t, lst.Masters[1].Error, "master b")
	assert.False(t, lst.Masters[3].Answered)
	li := lst.Lock("job")
	require.NotNil(t, li)
	assert.Equal(t, stateHeld, li.State)
	assert.Equal(t, 3, li.Votes)
	assert.Error(t, li.Masters[1].Err)
	assert.False(t, li.Masters[1].Present)

	c.Servers[4].Kill()
	lst, err = m.inspect(ctx, "")
	require.Error(t, err)
	require.NotNil(t, lst, "the partial listing comes with the error")
	assert.True(t, errors.Is(err, ErrUnavailable))
	var ne *NodeError
	assert.True(t, errors.As(err, &ne))
	for _, name := range []string{"master b", "master d", "master e"} {
		assert.Contains(t, err.Error(), name)
	}
	assert.NotContains(t, err.Error(), "master a:")
	assert.Equal(t, 2, lst.Answered())
	assert.Equal(t, statePartial, lst.Lock("job").State)
}

func TestClassify(t *testing.T) {
	m, err := New([]Node{{Name: "a", Addr: "x:1"}, {Name: "b", Addr: "x:2"}, {Name: "c", Addr: "x:3"}}, WithDrift(0.01, 2*time.Millisecond))
	require.NoError(t, err)
	s := func(v string, pttl time.Duration) masterView {
		return masterView{Present: true, Type: "string", Value: v, PTTL: pttl}
	}
	none := masterView{}
	tests := []struct {
		name     string
		views    []masterView
		state    lockState
		votes    int
		validity time.Duration
	}{
		{"quorum-th largest pttl minus drift", []masterView{s("v", 9*time.Second), s("v", 5*time.Second), s("v", 7*time.Second)}, stateHeld, 3, 7*time.Second - 72*time.Millisecond},
		{"two of three", []masterView{s("v", time.Second), none, s("v", 3*time.Second)}, stateHeld, 2, time.Second - 12*time.Millisecond},
		{"validity gone", []masterView{s("v", time.Millisecond), s("v", time.Millisecond), none}, stateOrphaned, 2, -1010 * time.Microsecond},
		{"no ttl on a quorum", []masterView{s("v", -1), s("v", -1), none}, stateHeld, 2, noExpiry},
		{"one master", []masterView{s("v", time.Second), none, none}, statePartial, 1, 0},
		{"no ttl on one", []masterView{s("v", -1), none, none}, stateOrphaned, 1, 0},
		{"contested", []masterView{s("v", time.Second), s("w", time.Second), none}, stateContested, 1, 0},
		{"majority beats a minority", []masterView{s("v", time.Second), s("w", time.Second), s("v", 2*time.Second)}, stateHeld, 2, time.Second - 12*time.Millisecond},
		{"hash only", []masterView{{Present: true, Type: "hash", PTTL: time.Second}, none, none}, stateOrphaned, 0, 0},
		{"hash beside a minority", []masterView{{Present: true, Type: "hash"}, s("v", time.Second), none}, stateOrphaned, 1, 0},
		{"revoked: a tombstone on a quorum", []masterView{s(keyspace.Tombstone("v"), time.Second), s(keyspace.Tombstone("v"), 3*time.Second), none}, stateRevoked, 2, 0},
		{"revoked: a tombstone on one", []masterView{s(keyspace.Tombstone("v"), 3*time.Second), none, none}, stateRevoked, 1, 0},
		{"a holder beside a minority tombstone", []masterView{s(keyspace.Tombstone("v"), 3*time.Second), s("w", time.Second), s("w", time.Second)}, stateHeld, 2, time.Second - 12*time.Millisecond},
		{"a forged tombstone (not hex) is a foreign value", []masterView{s("rl1x."+strings.Repeat("z", 40), time.Second), s("rl1x."+strings.Repeat("z", 40), time.Second), none}, stateHeld, 2, time.Second - 12*time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			li := lockInfo{Masters: tt.views}
			m.classify(&li)
			assert.Equal(t, tt.state, li.State)
			assert.Equal(t, tt.votes, li.Votes)
			assert.Equal(t, tt.validity, li.Validity)
			if tt.state == stateRevoked {
				// Free when the longest tombstone ends, as observed.
				assert.Equal(t, li.ObservedAt.Add(3*time.Second), li.FreeAt)
				assert.Nil(t, li.Owner)
			} else {
				assert.True(t, li.FreeAt.IsZero())
			}
		})
	}
}

func TestEscapeGlob(t *testing.T) {
	assert.Equal(t, `lock:`, keyspace.EscapeGlob("lock:"))
	assert.Equal(t, `a\*b\?\[c\]\\`, keyspace.EscapeGlob(`a*b?[c]\`))
}
