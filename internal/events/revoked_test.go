package events

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/admin"
)

// A revocation (the holder's value replaced by its tombstone, SET PX over it)
// is a revoked event of the holder's value, not an acquisition of the
// tombstone; the tombstone's own expire is no extension.
func TestMergerRevocationIsARevokedEventOfTheHolder(t *testing.T) {
	t0 := time.Now()
	m := NewMerger(3, 5, time.Second)
	all := []string{"a", "b", "c", "d", "e"}
	var got []Event
	for _, ms := range all {
		got = append(got, m.Add(ms, "job", "set", "rl1.holder", t0)...)
		got = append(got, m.Add(ms, "job", "expire", "", t0)...)
	}
	at := t0.Add(time.Second)
	tomb := admin.Tombstone("rl1.holder")
	for _, ms := range all {
		got = append(got, m.Add(ms, "job", "set", tomb, at)...)
		got = append(got, m.Add(ms, "job", "expire", "", at)...)
	}
	got = append(got, m.Flush(at.Add(2*time.Second))...)
	require.Len(t, got, 2)
	assert.Equal(t, Acquired, got[0].Kind)
	assert.Equal(t, Revoked, got[1].Kind)
	assert.Equal(t, "rl1.holder", got[1].Value)
}

// A poll that finds a held lock revoked reports it so, not as released.
func TestDiffReportsARevocation(t *testing.T) {
	now := time.Now()
	held := admin.LockInfo{Name: "job", State: admin.StateHeld, Value: "rl1.holder", Validity: time.Minute, ObservedAt: now}
	revoked := admin.LockInfo{Name: "job", State: admin.StateRevoked, Value: admin.Tombstone("rl1.holder"), ObservedAt: now, FreeAt: now.Add(time.Minute)}
	evs := Diff(&admin.Listing{Locks: []admin.LockInfo{held}}, &admin.Listing{Locks: []admin.LockInfo{revoked}}, now)
	require.Len(t, evs, 1)
	assert.Equal(t, Revoked, evs[0].Kind)
	assert.Equal(t, "rl1.holder", evs[0].Value)
}
