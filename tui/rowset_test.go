package tui

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/quorum"
)

func rowsNamed(state admin.LockState, names ...string) []admin.LockInfo {
	out := make([]admin.LockInfo, len(names))
	for i, n := range names {
		out[i] = admin.LockInfo{Name: n, State: state}
	}
	return out
}

// TestSnapshotMerged: the fresh rows of an answer replace the listing's rows of
// their names or add rows, the gone names are left out, and the listing (shared
// with earlier answers) is not changed.
func TestSnapshotMerged(t *testing.T) {
	tests := []struct {
		name  string
		all   []string
		fresh []string
		gone  []string
		want  []string // name, with * when the row is the fresh one
	}{
		{"nothing read afresh", []string{"a", "b"}, nil, nil, []string{"a", "b"}},
		{"fresh rows replace", []string{"a", "b", "c"}, []string{"b"}, nil, []string{"a", "b*", "c"}},
		{"a row gone", []string{"a", "b", "c"}, []string{"c"}, []string{"b"}, []string{"a", "c*"}},
		{"gone off screen too", []string{"a", "b", "c"}, nil, []string{"a", "c"}, []string{"b"}},
		{"a new row and a gone one", []string{"a", "c", "e"}, []string{"b", "d"}, []string{"a", "e"}, []string{"b*", "c", "d*"}},
		{"gone wins over fresh", []string{"a", "b"}, []string{"b"}, []string{"b"}, []string{"a"}},
		{"natural order", []string{"item-10", "item-2"}, []string{"item-9"}, nil, []string{"item-2", "item-9*", "item-10"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := Snapshot{Locks: rowsNamed(admin.StatePartial, tt.all...), Fresh: rowsNamed(admin.StateHeld, tt.fresh...), Gone: tt.gone}
			before := slices.Clone(snap.Locks)
			got := []string{}
			for _, li := range snap.Merged() {
				n := li.Name
				if li.State == admin.StateHeld {
					n += "*"
				}
				got = append(got, n)
			}
			assert.Equal(t, tt.want, got)
			assert.Equal(t, before, snap.Locks, "the shared listing is not changed")
		})
	}
}

// referenceRows is the rule the table's rows follow, written plainly: every row
// of the answer but the bookkeeping keys, those that pass the filter, stably
// sorted by the column from the name order (ties stay by name, ascending, also
// in a descending sort).
func referenceRows(snap Snapshot, k listKey) (names []string, listed int) {
	held := k.heldSet()
	left := func(li *admin.LockInfo) time.Duration {
		if li.Validity <= 0 || li.Validity == admin.NoExpiry {
			return li.Validity
		}
		return max(li.Deadline().Sub(t0), 1)
	}
	var rows []admin.LockInfo
	for _, li := range snap.Merged() {
		if !bookkeeping(&li) {
			rows = append(rows, li)
		}
	}
	listed = len(rows)
	if match := newMatcher(k.filter); match != nil {
		rows = slices.DeleteFunc(rows, func(li admin.LockInfo) bool {
			return !(match(li.Name) || match(string(li.State)) || match(holderOf(&li, held[li.Name])) || match(li.Library) || match(kindFromRow(&li)))
		})
	}
	less := func(a, b *admin.LockInfo) bool {
		switch k.sortBy {
		case sortState:
			return a.State < b.State
		case sortValidity: // what is left at one instant: observed times differ
			return left(a) < left(b)
		case sortOwner:
			return naturalCompare(holderOf(a, held[a.Name]), holderOf(b, held[b.Name])) < 0
		case sortVotes:
			return a.Votes < b.Votes
		case sortKind:
			return naturalCompare(kindFromRow(a), kindFromRow(b)) < 0
		}
		return naturalCompare(a.Name, b.Name) < 0
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if k.desc {
			return less(&rows[j], &rows[i])
		}
		return less(&rows[i], &rows[j])
	})
	for _, li := range rows {
		names = append(names, li.Name)
	}
	return names, listed
}

// randomAnswer is a listing of n locks with few distinct cells (many ties), some
// bookkeeping keys and names whose digits order them naturally, and fresh rows
// that change some of them, add others, and gone names.
func randomAnswer(r *rand.Rand, n int) Snapshot {
	states := []admin.LockState{admin.StateHeld, admin.StatePartial, admin.StateContested, admin.StateOrphaned}
	row := func(name string) admin.LockInfo {
		li := admin.LockInfo{Name: name, State: states[r.IntN(len(states))], Votes: r.IntN(4), Total: 3, Validity: time.Duration(r.IntN(5)) * time.Second, Library: "redlock", Value: fmt.Sprint(r.IntN(3))}
		li.ObservedAt = t0.Add(time.Duration(r.IntN(3)) * 500 * time.Millisecond) // rows merged at different times
		if r.IntN(10) == 0 {
			li.Validity = admin.NoExpiry
		}
		switch r.IntN(4) {
		case 0:
			li.Owner = &quorum.Owner{Label: fmt.Sprintf("job-%d", r.IntN(12)), Host: "h"}
		case 1:
			li.Owner = &quorum.Owner{Label: "etl", Host: "h", Kind: "multi", Count: 1 + r.IntN(3)}
		case 2:
			li.Library = "redsync"
		}
		return li
	}
	name := func() string {
		switch r.IntN(8) {
		case 0:
			return fmt.Sprintf("item-%d:fence", r.IntN(n))
		case 1:
			return fmt.Sprintf("sem:permit:%d", r.IntN(5))
		}
		return fmt.Sprintf("item-%d", r.IntN(n))
	}
	var snap Snapshot
	seen := map[string]bool{}
	for range n {
		if nm := name(); !seen[nm] {
			seen[nm] = true
			snap.Locks = append(snap.Locks, row(nm))
		}
	}
	r.Shuffle(len(snap.Locks), func(i, j int) { snap.Locks[i], snap.Locks[j] = snap.Locks[j], snap.Locks[i] })
	fresh := map[string]bool{}
	for range r.IntN(n/4 + 1) {
		nm := name()
		if r.IntN(3) == 0 && len(snap.Locks) > 0 {
			nm = snap.Locks[r.IntN(len(snap.Locks))].Name
		}
		if !fresh[nm] {
			fresh[nm] = true
			snap.Fresh = append(snap.Fresh, row(nm))
		}
	}
	for range r.IntN(n/4 + 1) {
		nm := name()
		if r.IntN(2) == 0 && len(snap.Locks) > 0 {
			nm = snap.Locks[r.IntN(len(snap.Locks))].Name
		}
		snap.Gone = append(snap.Gone, nm)
	}
	return snap
}

// TestRowsForEveryKeyFollowTheRule: the rows the table derives from a listing
// once, with the fresh rows laid over them afterwards, are those of the plain
// rule for every sort column, direction, filter and set of locks held here.
func TestRowsForEveryKeyFollowTheRule(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	filters := []string{"", "item-1", "job", "HELD", "multi", "item-?", "*:permit:*", "[", "redsync"}
	for round := range 60 {
		snap := randomAnswer(r, 5+r.IntN(60))
		listing := Snapshot{Locks: snap.Locks}
		for _, by := range []sortKey{sortName, sortState, sortValidity, sortOwner, sortVotes, sortKind} {
			for _, desc := range []bool{false, true} {
				k := listKey{sortBy: by, desc: desc, filter: filters[r.IntN(len(filters))]}
				if r.IntN(3) == 0 && len(snap.Locks) > 0 {
					k.held = snap.Locks[r.IntN(len(snap.Locks))].Name
				}
				t.Run(fmt.Sprintf("%d/%s/%v/%q", round, sortNames[by], desc, k.filter), func(t *testing.T) {
					wantNames, wantListed := referenceRows(snap, k)
					// The listing's rows for the key first (as a pass's listing is
					// indexed and sorted once), then an answer with fresh rows over it.
					first := newLockSet(listing, nil)
					first.idx.rowsFor(k)
					set := newLockSet(snap, first)
					require.Same(t, first.idx, set.idx, "the same listing is indexed once")
					rows, listed := set.rowsFor(k)
					var got []string
					for _, li := range rows {
						got = append(got, li.Name)
					}
					assert.Equal(t, wantNames, got)
					assert.Equal(t, wantListed, listed)
					// Every row is found where it is, as the selection is.
					ord := newRowOrder(k)
					for i, li := range rows {
						j, ok := slices.BinarySearchFunc(rows, set.lock(li.Name), ord.compare)
						require.True(t, ok && i == j, "row %d (%s) found at %d", i, li.Name, j)
					}
				})
			}
		}
	}
}

// TestSpansCarryOverListingsAndFreshRows: the countdown reference of a lock is
// the longest validity seen for its value, across listings and fresh rows; a
// new value starts over.
func TestSpansCarryOverListingsAndFreshRows(t *testing.T) {
	row := func(name, value string, v time.Duration) admin.LockInfo {
		return admin.LockInfo{Name: name, Value: value, Validity: v}
	}
	a := newLockSet(Snapshot{Locks: []admin.LockInfo{row("a", "1", 30*time.Second), row("b", "1", 20*time.Second)}}, nil)
	b := newLockSet(Snapshot{Locks: []admin.LockInfo{row("a", "1", 25*time.Second), row("b", "2", 10*time.Second)}, Fresh: []admin.LockInfo{row("c", "1", 40*time.Second)}}, a)
	c := newLockSet(Snapshot{Locks: []admin.LockInfo{row("a", "1", 20*time.Second), row("b", "2", 5*time.Second), row("c", "1", 35*time.Second)}}, b)
	tests := []struct {
		set  *lockSet
		name string
		want time.Duration
	}{
		{b, "a", 30 * time.Second},
		{b, "b", 10 * time.Second}, // a new value
		{b, "c", 40 * time.Second},
		{c, "a", 30 * time.Second},
		{c, "b", 10 * time.Second},
		{c, "c", 40 * time.Second}, // from the fresh row of the answer before
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.set.spanOf(tt.set.lock(tt.name)), tt.name)
	}
}
