package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/admin"
)

// masterKey is what one master holds under one key, read with go-redis (GET,
// PTTL, TYPE: another read path than the listing's).
type masterKey struct {
	typ   string
	value string
	pttl  time.Duration
}

// `locks -json` over 20,000 keys, with one master down, is what the masters
// hold: every key under the prefix and no other, each master's presence, type,
// value (redacted, its length past the read cap) and PTTL, and the votes and
// state that follow from them. The keys take every shape: held, partial,
// contested, without a TTL, a hash, a hostile 4 MB value, a name with control
// characters.
func TestLocksJSONAtScaleIsWhatTheMastersHold(t *testing.T) {
	if testing.Short() {
		t.Skip("fills 20,000 keys on 5 masters")
	}
	e := newEnv(t)
	ctx := context.Background()
	const n = 20000
	huge := strings.Repeat("h", 4<<20)
	for mi, s := range e.c.Servers {
		pipe := s.Client().Pipeline()
		for i := range n {
			key := fmt.Sprintf("lock:scale/%05d", i)
			v := fmt.Sprintf("value-%05d", i)
			switch {
			case i%10 == 1 && mi >= 2: // partial: on masters a and b only
				continue
			case i%10 == 2: // contested: another value on each master
				v += fmt.Sprintf("-on-%d", mi)
			case i%10 == 3 && mi == 0: // held on b..e, another value on a
				v = "other"
			}
			ttl := time.Hour
			if i%10 == 4 {
				ttl = 0 // no TTL
			}
			pipe.Set(ctx, key, v, ttl)
		}
		pipe.HSet(ctx, "lock:scale/hash", "f", "1")
		pipe.Set(ctx, "lock:scale/huge", huge[:len(huge)-mi%2], time.Hour) // two lengths: 3 votes against 2
		pipe.Set(ctx, "lock:scale/odd\x1b[31m\r\nname", "odd\x00value", time.Hour)
		_, err := pipe.Exec(ctx)
		require.NoError(t, err)
	}
	e.c.Servers[4].Kill()

	r := e.run("locks", "-json", "-timeout", "60s")
	require.Equal(t, 0, r.code, r.stderr)
	checkDoc(t, "locks", r.stdout)
	var doc struct {
		Answered int `json:"answered"`
		Locks    []struct {
			Name    string `json:"name"`
			State   string `json:"state"`
			Votes   int    `json:"votes"`
			Masters []struct {
				Master     string  `json:"master"`
				Present    bool    `json:"present"`
				Type       string  `json:"type"`
				Value      string  `json:"value"`
				ValueBytes int64   `json:"value_bytes"`
				PTTLMS     float64 `json:"pttl_ms"`
				Error      string  `json:"error"`
			} `json:"masters"`
		} `json:"locks"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc))
	require.Equal(t, 4, doc.Answered)

	// What the four live masters hold.
	held := make([]map[string]masterKey, 4)
	names := map[string]bool{}
	for mi := range held {
		held[mi] = map[string]masterKey{}
		cl := e.c.Servers[mi].Client()
		iter := cl.Scan(ctx, 0, "lock:*", 1000).Iterator()
		for iter.Next(ctx) {
			key := iter.Val()
			typ, err := cl.Type(ctx, key).Result()
			require.NoError(t, err)
			mk := masterKey{typ: typ}
			if typ == "string" {
				mk.value, err = cl.Get(ctx, key).Result()
				require.NoError(t, err)
			}
			mk.pttl, err = cl.PTTL(ctx, key).Result()
			require.NoError(t, err)
			name := strings.TrimPrefix(key, "lock:")
			held[mi][name] = mk
			names[name] = true
		}
		require.NoError(t, iter.Err())
	}
	require.Len(t, doc.Locks, len(names), "one entry per key")
	require.Greater(t, len(names), n)
	for _, l := range doc.Locks {
		require.True(t, names[l.Name], "a lock no master holds: %q", l.Name)
		require.Len(t, l.Masters, 5, l.Name)
		votes := map[string]int{}
		for mi, mv := range l.Masters {
			if mi == 4 {
				assert.NotEmpty(t, mv.Error, "the master down: %s", l.Name)
				assert.False(t, mv.Present)
				continue
			}
			want, ok := held[mi][l.Name]
			require.Equal(t, ok, mv.Present, "%s on %s", l.Name, mv.Master)
			if !ok {
				continue
			}
			assert.Equal(t, want.typ, mv.Type, l.Name)
			if want.typ != "string" {
				continue
			}
			votes[want.value]++
			read := want.value[:min(len(want.value), admin.ValueReadCap)]
			assert.Equal(t, admin.Redact(read), mv.Value, "%s on %s", l.Name, mv.Master)
			if len(want.value) > admin.ValueReadCap {
				assert.Equal(t, int64(len(want.value)), mv.ValueBytes, l.Name)
			} else {
				assert.Zero(t, mv.ValueBytes, l.Name)
			}
			if want.pttl < 0 {
				assert.Equal(t, -1.0, mv.PTTLMS, l.Name)
			} else {
				assert.InDelta(t, float64(want.pttl.Milliseconds()), mv.PTTLMS, 60_000, l.Name)
			}
		}
		most := 0
		for _, c := range votes {
			most = max(most, c)
		}
		assert.Equal(t, most, l.Votes, l.Name)
		var state string
		switch {
		case len(votes) == 0:
			state = "orphaned"
		case most >= 3:
			state = "held"
		case len(votes) > 1:
			state = "contested"
		default:
			state = "partial"
		}
		assert.Equal(t, state, l.State, l.Name)
	}
	assert.Less(t, len(r.stdout), 64<<20, "no value printed whole")
}
