package quorum

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/keyspace"
	"github.com/redlock/redlock/internal/redistest"
)

// Attacks on Lock.Verify, the read the loss watch decides by, through the
// pipelined transport: what a master holds is compared with what Verify tells
// the holder (Err, Done), for every kind of hold.

// verifyKind is one kind of hold: how to take it, the keys a planted value
// replaces (a multi-name hold's second name: the first keeps ours) and whether
// it is a member of a sorted set (a shared hold) rather than a string.
type verifyKind struct {
	name   string
	take   func(t *testing.T, m *Manager, name string) *Lock
	keys   func(l *Lock) []string
	member bool
}

var verifyKinds = []verifyKind{
	{name: "mutex", take: func(t *testing.T, m *Manager, name string) *Lock {
		l, err := m.Acquire(context.Background(), name, time.Minute, WithLossWatch())
		require.NoError(t, err)
		return l
	}, keys: func(l *Lock) []string { return []string{l.Key()} }},
	{name: "permit", take: func(t *testing.T, m *Manager, name string) *Lock {
		l, err := m.Acquire(context.Background(), name, time.Minute, withPermits(2), WithLossWatch())
		require.NoError(t, err)
		return l
	}, keys: func(l *Lock) []string { return []string{l.Key()} }},
	{name: "leadership", take: func(t *testing.T, m *Manager, name string) *Lock {
		e, err := m.Election(name)
		require.NoError(t, err)
		ld, err := e.Campaign(context.Background(), "me", time.Minute) // a keep-alive: watched
		require.NoError(t, err)
		return ld.Lock
	}, keys: func(l *Lock) []string { return []string{l.Key()} }},
	{name: "multi", take: func(t *testing.T, m *Manager, name string) *Lock {
		l, err := m.takeMulti(context.Background(), []string{name + "/a", name + "/b"}, time.Minute, WithLossWatch())
		require.NoError(t, err)
		return l
	}, keys: func(l *Lock) []string { return l.watchKeys()[1:] }},
	{name: "shared", take: func(t *testing.T, m *Manager, name string) *Lock {
		l, err := m.Acquire(context.Background(), name, time.Minute, withShared(), WithLossWatch())
		require.NoError(t, err)
		return l
	}, keys: func(l *Lock) []string { return []string{l.Key()} }, member: true},
}

// verifyPlant replaces what a master holds of a hold at key (value: the
// hold's) with something hostile; revokes: it is the hold's tombstone.
type verifyPlant struct {
	name    string
	revokes bool
	str     func(ctx context.Context, cl *redis.Client, key, value string) error // a string hold's key
	member  func(ctx context.Context, cl *redis.Client, key, value string) error // a shared hold's key
}

// setString sets key to v (any type before).
func setString(v func(value string) string) func(ctx context.Context, cl *redis.Client, key, value string) error {
	return func(ctx context.Context, cl *redis.Client, key, value string) error {
		return cl.Set(ctx, key, v(value), time.Minute).Err()
	}
}

// swapMember removes the hold's member from key and adds v instead.
func swapMember(v func(value string) string) func(ctx context.Context, cl *redis.Client, key, value string) error {
	return func(ctx context.Context, cl *redis.Client, key, value string) error {
		p := cl.TxPipeline()
		p.ZRem(ctx, key, value)
		p.ZAdd(ctx, key, redis.Z{Score: float64(time.Now().Add(time.Hour).UnixMilli()), Member: v(value)})
		_, err := p.Exec(ctx)
		return err
	}
}

// retype replaces key by a key of another type holding value.
func retype(kind string) func(ctx context.Context, cl *redis.Client, key, value string) error {
	return func(ctx context.Context, cl *redis.Client, key, value string) error {
		p := cl.TxPipeline()
		p.Del(ctx, key)
		switch kind {
		case "string":
			p.Set(ctx, key, value, time.Minute)
		case "set":
			p.SAdd(ctx, key, value)
		case "hash":
			p.HSet(ctx, key, value, value)
		case "list":
			p.RPush(ctx, key, value)
		case "zset":
			p.ZAdd(ctx, key, redis.Z{Score: 1, Member: value})
		case "stream":
			p.XAdd(ctx, &redis.XAddArgs{Stream: key, Values: []string{value, value}})
		}
		_, err := p.Exec(ctx)
		return err
	}
}

// long is value followed by CRLFs and escapes up to n bytes.
func long(n int) func(value string) string {
	return func(value string) string {
		s := value + strings.Repeat("\r\n\x1b[2J", n/6+1)
		return s[:n]
	}
}

func binary(string) string {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return string(b)
}

var verifyPlants = []verifyPlant{
	{name: "suffix", str: setString(func(v string) string { return v + "x" }), member: swapMember(func(v string) string { return v + "x" })},
	{name: "prefix", str: setString(func(v string) string { return v[:len(v)-1] }), member: swapMember(func(v string) string { return v[:len(v)-1] })},
	{name: "crlf", str: setString(func(v string) string { return v + "\r\n" }), member: swapMember(func(v string) string { return "\r\n" + v })},
	{name: "resp", str: setString(func(v string) string { return "$-1\r\n" }), member: swapMember(func(v string) string { return "-ERR " + v + "\r\n" })},
	{name: "empty", str: setString(func(string) string { return "" }), member: swapMember(func(string) string { return "" })},
	{name: "binary", str: setString(binary), member: swapMember(binary)},
	{name: "4096", str: setString(long(4096)), member: swapMember(long(4096))},
	{name: "4097", str: setString(long(4097)), member: swapMember(long(4097))},
	{name: "1MiB+1", str: setString(long(1<<20 + 1)), member: swapMember(long(1<<20 + 1))},
	{name: "tombstone", revokes: true, str: setString(keyspace.Tombstone), member: swapMember(keyspace.Tombstone)},
	{name: "tombstone+x", str: setString(func(v string) string { return keyspace.Tombstone(v) + "x" }),
		member: swapMember(func(v string) string { return keyspace.Tombstone(v) + "x" })},
	{name: "set", str: retype("set"), member: retype("set")},
	{name: "hash", str: retype("hash"), member: retype("hash")},
	{name: "list", str: retype("list"), member: retype("list")},
	{name: "stream", str: retype("stream"), member: retype("stream")},
	{name: "other", str: retype("zset"), member: retype("string")},
}

// holdsOn reads what a master holds of l the way a test trusts: every key of
// kind k holds l's value (a string), or l's member (a shared hold).
func holdsOn(t *testing.T, s *redistest.Server, k verifyKind, l *Lock) bool {
	ctx := context.Background()
	if k.member {
		_, err := s.Client().ZScore(ctx, l.Key(), l.Token()).Result()
		return err == nil
	}
	for _, key := range l.watchKeys() {
		v, err := s.Client().Get(ctx, key).Result()
		if err != nil || v != l.Token() {
			return false
		}
	}
	return true
}

// TestVerifyHostileValuesForEveryHold: hostile values and keys of another
// type on two masters of five leave every kind of hold held (Verify says so, the
// loss watch gives nothing up); on a third they are a loss, heard by Done with
// ErrLost, ErrRevoked only for the hold's own tombstone. Verify's verdict is
// compared with what the masters hold.
func TestVerifyHostileValuesForEveryHold(t *testing.T) {
	c, m := testCluster(t, 5, WithNodeTimeout(time.Second))
	ctx := context.Background()
	type tcase struct {
		kind  verifyKind
		plant verifyPlant
		l     *Lock
	}
	var cases []*tcase
	for _, k := range verifyKinds {
		for _, p := range verifyPlants {
			tc := &tcase{kind: k, plant: p}
			tc.l = k.take(t, m, fmt.Sprintf("va/%s/%s", k.name, p.name))
			cases = append(cases, tc)
		}
	}
	t.Cleanup(func() {
		for _, tc := range cases {
			_ = tc.l.Release(context.Background())
		}
	})
	plant := func(tc *tcase, s *redistest.Server) {
		fn := tc.plant.str
		if tc.kind.member {
			fn = tc.plant.member
		}
		for _, key := range tc.kind.keys(tc.l) {
			require.NoError(t, fn(ctx, s.Client(), key, tc.l.Token()), "%s/%s", tc.kind.name, tc.plant.name)
		}
	}
	for _, tc := range cases {
		armed(t, m, tc.l)
		for _, s := range c.Servers[:2] {
			plant(tc, s)
		}
	}
	time.Sleep(300 * time.Millisecond) // the watch reads the changed keys, verifies
	for _, tc := range cases {
		name := tc.kind.name + "/" + tc.plant.name
		held := 0
		for _, s := range c.Servers {
			if holdsOn(t, s, tc.kind, tc.l) {
				held++
			}
		}
		require.Equal(t, 3, held, "%s: the plant took two masters", name)
		require.NoError(t, tc.l.Verify(ctx), "%s: three masters of five hold it", name)
		require.NoError(t, tc.l.Err(), "%s: the watch gave up a lock a quorum holds", name)
	}
	for _, tc := range cases {
		plant(tc, c.Servers[2])
	}
	for _, tc := range cases {
		name := tc.kind.name + "/" + tc.plant.name
		err := tc.l.Verify(ctx)
		require.ErrorIs(t, err, ErrLost, "%s: two masters of five hold it", name)
		assert.Equal(t, tc.plant.revokes, errors.Is(err, ErrRevoked), "%s: revoked", name)
		select {
		case <-tc.l.Done():
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: Done did not fire", name)
		}
		assert.ErrorIs(t, tc.l.Err(), ErrLost, "%s", name)
		assert.Equal(t, tc.plant.revokes, errors.Is(tc.l.Err(), ErrRevoked), "%s: Err revoked", name)
	}
}
