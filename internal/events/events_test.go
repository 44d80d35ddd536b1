package events

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/quorum"
)

func TestMergerEmitsOnceAQuorumReported(t *testing.T) {
	t0 := time.Now()
	m := NewMerger(3, time.Second)
	steps := []struct {
		master, op, value string
		dt                time.Duration
		want              string // event kind, "" for none
	}{
		{"a", "set", "v1", 0, ""},
		{"b", "set", "v1", 1 * time.Millisecond, ""},
		{"b", "set", "v1", 2 * time.Millisecond, ""}, // the same master twice counts once
		{"c", "set", "v2", 3 * time.Millisecond, ""}, // another value does not count
		{"d", "set", "v1", 4 * time.Millisecond, Acquired},
		{"e", "set", "v1", 5 * time.Millisecond, ""}, // after the quorum: no second event
		{"a", "pexpire", "", 10 * time.Millisecond, ""},
		{"b", "pexpire", "", 11 * time.Millisecond, ""},
		{"c", "pexpire", "", 12 * time.Millisecond, Extended},
		{"a", "set", "v3", 20 * time.Millisecond, ""},
		{"b", "set", "v3", 21 * time.Millisecond, ""},
		{"c", "set", "v3", 22 * time.Millisecond, ChangedHands},
		{"a", "del", "", 30 * time.Millisecond, ""},
		{"b", "del", "", 31 * time.Millisecond, ""},
		{"c", "del", "", 32 * time.Millisecond, Released},
		{"a", "set", "v4", 40 * time.Millisecond, ""},
		{"b", "set", "v4", 41 * time.Millisecond, ""},
		{"c", "set", "v4", 42 * time.Millisecond, Acquired},
		{"a", quorum.ForceExpiredMessage, "", 50 * time.Millisecond, ""},
		{"a", "del", "", 51 * time.Millisecond, ""},
		{"b", "del", "", 52 * time.Millisecond, ""},
		{"c", "del", "", 53 * time.Millisecond, ForceExpired},
		{"a", "expired", "", 2 * time.Second, ""},
		{"b", "expired", "", 4 * time.Second, ""}, // outside the window of a's
		{"c", "hset", "", 4 * time.Second, ""},    // not a lock operation
	}
	for i, st := range steps {
		ev := m.Add(st.master, "x", st.op, st.value, t0.Add(st.dt))
		if st.want == "" {
			assert.Nil(t, ev, "step %d", i)
			continue
		}
		require.NotNil(t, ev, "step %d", i)
		assert.Equal(t, st.want, ev.Kind, "step %d", i)
		assert.Len(t, ev.Masters, 3)
	}
}

func TestDiff(t *testing.T) {
	now := time.Now()
	lock := func(name, value string, validity time.Duration) quorum.LockInfo {
		return quorum.LockInfo{Name: name, Value: value, State: quorum.StateHeld, Validity: validity, ObservedAt: now,
			Masters: []quorum.MasterView{{Master: "a", Present: true, Value: value}}}
	}
	prev := &quorum.Listing{Locks: []quorum.LockInfo{lock("kept", "v", time.Second), lock("gone", "v", 10*time.Second),
		lock("timed", "v", -time.Millisecond), lock("swapped", "v", time.Second), lock("longer", "v", time.Second)}}
	cur := &quorum.Listing{Locks: []quorum.LockInfo{lock("kept", "v", time.Second), lock("new", "v", time.Second),
		lock("swapped", "w", time.Second), lock("longer", "v", 5*time.Second)}}
	got := map[string]string{}
	for _, ev := range Diff(prev, cur, now) {
		got[ev.Name] = ev.Kind
	}
	assert.Equal(t, map[string]string{"new": Acquired, "gone": Released, "timed": Expired, "swapped": ChangedHands, "longer": Extended}, got)
}
