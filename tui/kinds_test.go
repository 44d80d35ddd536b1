package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/quorum"
)

// The leadership's value: hostile, as any string from Redis.
const leaderValue = "rl1.leader-token"

// primitiveRow is a row of one key of a primitive, held on every master with
// the given Redis type.
func primitiveRow(name, typ, value string, owner *quorum.Owner, validity time.Duration) admin.LockInfo {
	ms := mastersWith(value, validity+300*time.Millisecond, 5)
	for i := range ms {
		ms[i].Type = typ
	}
	return admin.LockInfo{
		Name: name, Key: "lock:" + name, State: admin.StateHeld, Votes: 5, Quorum: 3, Total: 5,
		Value: value, Owner: owner, Library: "redlock", Validity: validity, ObservedAt: t0, Masters: ms,
	}
}

// primitivesSnapshot is what the source answers for a cluster with a semaphore
// (2 of 3 permits held), a multi-name hold, two shared holders of a name and a
// leader whose value is hostile, with the keys that only serve them (the
// election's record, which never expires, and an exclusive waiter's marker).
func primitivesSnapshot(s *Snapshot) {
	sem := func(l string) *quorum.Owner { return &quorum.Owner{Label: l, Host: "h", Kind: "sem", Count: 3} }
	multi := &quorum.Owner{Label: "etl [multi-name hold of 2 names]", Host: "h", Kind: "multi", Count: 2}
	leader := &quorum.Owner{Label: "[value 10.0.0.5:8080\x1b[2J, term 7, leader of crond]", Host: "h", Kind: "leader"}
	record := primitiveRow("crond:leader:term", "hash", "", nil, 0)
	record.State, record.Validity, record.Library = admin.StateOrphaned, 0, "record of election crond"
	for i := range record.Masters {
		record.Masters[i].PTTL = -1
	}
	s.Locks = []admin.LockInfo{
		primitiveRow("nightly:permit:0", "string", "rl1.p0", sem("job-a [permit 0 of nightly (2/3 held)]"), 40*time.Second),
		primitiveRow("nightly:permit:2", "string", "rl1.p2", sem("job-b [permit 2 of nightly (2/3 held)]"), 50*time.Second),
		primitiveRow("etl/in", "string", "rl1.multi", multi, 30*time.Second),
		primitiveRow("etl/out", "string", "rl1.multi", multi, 30*time.Second),
		primitiveRow("doc", "zset", "", &quorum.Owner{Label: "[shared x2]", Host: "h"}, 20*time.Second),
		primitiveRow("doc:xwait", "string", "rl1.w", &quorum.Owner{Label: "writer", Host: "h"}, 5*time.Second),
		primitiveRow("crond:leader", "string", leaderValue, leader, 9*time.Second),
		record,
		primitiveRow("plain", "string", "rl1.plain", &quorum.Owner{Label: "ops", Host: "h"}, 10*time.Second),
	}
	s.Kinds = map[string]string{
		"nightly:permit:0": "sem 2/3", "nightly:permit:2": "sem 2/3",
		"etl/in": "multi 2", "etl/out": "multi 2", "doc": "shared 2", "crond:leader": "leader t7",
	}
}

// TestConsoleShowsEachPrimitive: at 80x24 each primitive's rows say what they
// are in the KIND column, as `locks` does, and the keys that only serve a
// primitive (the election's record, an exclusive waiter's marker) are not rows:
// the record, which never expires, is not an orphaned lock.
func TestConsoleShowsEachPrimitive(t *testing.T) {
	m, src, _, _ := fixture(t, 80, 24, false)
	src.edit(primitivesSnapshot)
	started(t, m)
	view := m.View()
	golden.RequireEqual(t, []byte(view))
	for _, l := range strings.Split(view, "\n") {
		assert.LessOrEqual(t, ansi.StringWidth(l), 80, "line %q", l)
	}
	assert.NotContains(t, view, "\x1b", "the leader's value is escaped")
	assert.NotContains(t, view, "orphaned")
	assert.NotContains(t, view, "crond:leader:term")
	assert.NotContains(t, view, "doc:xwait")
	assert.Contains(t, view, "Locks  7 ")
	for name, kind := range map[string]string{
		"nightly:permit:0 ": "sem 2/3", "nightly:permit:2 ": "sem 2/3", "etl/in ": "multi 2", "etl/out ": "multi 2",
		"doc ": "shared 2", "crond:leader ": "leader t7", "plain ": "lock",
	} {
		row := rowOf(view, " "+name)
		require.NotEmpty(t, row, name)
		assert.Contains(t, row, " "+kind+" ", name)
	}
	assert.Contains(t, rowOf(view, "crond:leader "), `value 10.0.0.5`, "the leader row carries the value")
}

// TestKindFromTheRowAlone: a row the source did not read afresh (no Kinds
// entry) still says what its key and value tell.
func TestKindFromTheRowAlone(t *testing.T) {
	s := &Snapshot{}
	primitivesSnapshot(s)
	s.Kinds = nil
	want := map[string]string{"nightly:permit:0": "sem ?/3", "etl/in": "multi 2", "doc": "shared", "crond:leader": "leader", "plain": "lock"}
	for i := range s.Locks {
		li := &s.Locks[i]
		if w, ok := want[li.Name]; ok {
			assert.Equal(t, w, kindOf(s, li), li.Name)
		}
	}
	other := primitiveRow("redisson", "hash", "", nil, time.Second)
	assert.Equal(t, "other", kindOf(s, &other))
}

// TestForceExpireOfALeaderDeposesOnlyTheLeadershipShown: x on the leader's row
// compares and deletes the leadership key with the value the row showed, on
// the masters that showed it, and nothing of the election's record.
func TestForceExpireOfALeaderDeposesOnlyTheLeadershipShown(t *testing.T) {
	m, src, lk, _ := fixture(t, 80, 24, false)
	src.edit(primitivesSnapshot)
	started(t, m)
	for i := 0; i < 10 && rowOf(m.View(), "› crond:leader ") == ""; i++ {
		drive(t, m, keys("j"))
	}
	require.NotEmpty(t, rowOf(m.View(), "› crond:leader "), m.View())
	drive(t, m, keys("x"))
	requireModal[*confirmModal](t, m)
	assert.NotContains(t, m.View(), "\x1b")
	drive(t, m, keys("y"))
	_, exp := lk.calls()
	assert.Equal(t, [][2]string{{"crond:leader", leaderValue}}, exp)
	require.Len(t, lk.seens, 1)
	for master, sn := range lk.seens[0] {
		assert.Equal(t, admin.Seen{Type: "string", Value: leaderValue}, sn, master)
	}
}

// TestFilterByKind: the filter matches a row's kind, so /sem finds the permits
// of the semaphores and /leader the leaderships.
func TestFilterByKind(t *testing.T) {
	s := &Snapshot{}
	primitivesSnapshot(s)
	names := func(filter string) []string {
		var out []string
		rows, _ := newLockSet(*s, nil).rowsFor(listKey{filter: filter})
		for _, li := range rows {
			out = append(out, li.Name)
		}
		return out
	}
	assert.Equal(t, []string{"nightly:permit:0", "nightly:permit:2"}, names("sem"))
	assert.Equal(t, []string{"crond:leader"}, names("leader"), "the election's record is not a row")
	assert.Equal(t, []string{"doc"}, names("shared"), "nor the exclusive waiter's marker")
}

// Regression: with a filter the title said "N of M matching" with the keys that
// only serve a primitive (an election's record, an exclusive waiter's marker)
// counted in M, though they are never rows.
func TestFilterCountLeavesOutBookkeepingKeys(t *testing.T) {
	m, src, _, _ := fixture(t, 100, 30, false)
	src.edit(primitivesSnapshot)
	started(t, m)
	drive(t, m, keys("/"))
	drive(t, m, keys("sem"))
	drive(t, m, enter)
	assert.Contains(t, m.View(), `2 of 7 matching "sem"`)
}

// TestSortByKind: K sorts the rows by their KIND cell (names within a kind in
// order), again K reverses.
func TestSortByKind(t *testing.T) {
	m, src, _, _ := fixture(t, 100, 30, false)
	src.edit(primitivesSnapshot)
	started(t, m)
	order := func() []string {
		var out []string
		for _, li := range m.table.rows() {
			out = append(out, kindFromRow(li))
		}
		return out
	}
	drive(t, m, keys("K"))
	got := order()
	assert.IsNonDecreasing(t, got)
	assert.Contains(t, m.View(), "sort: kind↑")
	drive(t, m, keys("K"))
	assert.IsNonIncreasing(t, order())
	assert.Equal(t, len(got), len(order()))
}
