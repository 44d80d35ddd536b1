package tui

import (
	"slices"
	"sync"
	"time"

	"github.com/redlock/redlock/admin"
)

// The locks table's data. A poll answer is a listing (Snapshot.Locks: at 100,000
// locks the source's background listing, which changes once per pass and is
// shared between answers) and the few rows read afresh for the screen
// (Snapshot.Fresh, Snapshot.Gone). What depends on the listing alone (its order
// by name, its count, the countdown spans, the rows sorted and filtered for a
// key) is computed once per listing, off the UI goroutine (listingIndex); a
// poll's answer lays its fresh rows over it (lockSet), which costs one block move
// of the row pointers, and the UI goroutine reads the rows on screen only.

// listingIndex is what the table derives from one listing. It is built off the
// UI goroutine and never changed after, but for its cache of sorted rows (mu).
type listingIndex struct {
	src   []admin.LockInfo  // the listing as the source gave it: its identity
	locks []admin.LockInfo  // sorted by name (naturally): src, or a sorted copy
	rows  []*admin.LockInfo // the table's rows by name: locks but the bookkeeping keys
	spans []time.Duration   // the countdown reference of locks[i]

	mu     sync.Mutex
	sorted []keyedRows // the rows for the keys asked lately, newest last
}

// keyedRows are the rows of a listing for one key.
type keyedRows struct {
	key  listKey
	rows []*admin.LockInfo
}

// sortedKept is how many keys' rows a listingIndex keeps.
const sortedKept = 4

// newListingIndex indexes the listing src, carrying the countdown spans over
// from prev (nil for the first answer).
func newListingIndex(src []admin.LockInfo, prev *lockSet) *listingIndex {
	locks := src
	if !slices.IsSortedFunc(src, byName) {
		locks = slices.Clone(src)
		slices.SortStableFunc(locks, byName)
	}
	x := &listingIndex{src: src, locks: locks, rows: make([]*admin.LockInfo, 0, len(locks)), spans: make([]time.Duration, len(locks))}
	for i := range locks {
		if !bookkeeping(&locks[i]) {
			x.rows = append(x.rows, &locks[i])
		}
		x.spans[i] = locks[i].Validity
	}
	if prev == nil {
		return x
	}
	// The spans of the previous listing: both are sorted by name, so one walk.
	old := prev.idx
	j := 0
	for i := range locks {
		for j < len(old.locks) && naturalCompare(old.locks[j].Name, locks[i].Name) < 0 {
			j++
		}
		if j < len(old.locks) && old.locks[j].Name == locks[i].Name && old.locks[j].Value == locks[i].Value {
			x.spans[i] = max(x.spans[i], old.spans[j])
		}
	}
	// And those of the rows the previous answer read afresh.
	for name, sp := range prev.spans {
		if i, ok := x.find(name); ok && locks[i].Value == sp.value {
			x.spans[i] = max(x.spans[i], sp.max)
		}
	}
	return x
}

// find returns the index of name in locks.
func (x *listingIndex) find(name string) (int, bool) {
	i, ok := slices.BinarySearchFunc(x.locks, name, func(li admin.LockInfo, n string) int { return naturalCompare(li.Name, n) })
	return i, ok && x.locks[i].Name == name
}

// rowsFor returns the listing's rows for key k (filtered and sorted), computing
// them once per key; callers never change them. It can take tens of
// milliseconds at 100,000 locks: never on the UI goroutine for a large listing.
func (x *listingIndex) rowsFor(k listKey) []*admin.LockInfo {
	if k.sortBy == sortName && !k.desc && k.filter == "" {
		return x.rows
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, s := range x.sorted {
		if s.key == k {
			return s.rows
		}
	}
	ord := newRowOrder(k)
	rows := x.rows
	if match := newRowMatcher(k); match != nil {
		rows = nil
		for _, li := range x.rows {
			if match(li) {
				rows = append(rows, li)
			}
		}
	}
	if k.sortBy != sortName || k.desc {
		rows = ord.sorted(rows)
	}
	x.sorted = append(x.sorted, keyedRows{key: k, rows: rows})
	if len(x.sorted) > sortedKept {
		x.sorted = slices.Delete(x.sorted, 0, 1)
	}
	return rows
}

// lockSet is one poll answer's locks: a listing with the rows read afresh laid
// over it. Once built it is never changed, and is shared by the UI goroutine
// and the commands that prepare the next answer or re-sort the rows.
type lockSet struct {
	idx   *listingIndex
	fresh map[string]*admin.LockInfo // replaces the listing's row of the name, or adds one
	gone  map[string]bool            // left out, even when the listing or fresh has it
	spans map[string]span            // the countdown reference of the fresh rows
}

// span is the countdown reference of one lock: the longest validity seen for its value.
type span struct {
	value string
	max   time.Duration
}

// newLockSet lays snap's fresh rows over its listing, reusing prev's index when
// the listing is the same one (a source shares it between answers).
func newLockSet(snap Snapshot, prev *lockSet) *lockSet {
	s := &lockSet{}
	if prev != nil && sameListing(prev.idx.src, snap.Locks) {
		s.idx = prev.idx
	} else {
		s.idx = newListingIndex(snap.Locks, prev)
	}
	if len(snap.Gone) > 0 {
		s.gone = make(map[string]bool, len(snap.Gone))
		for _, n := range snap.Gone {
			s.gone[n] = true
		}
	}
	if len(snap.Fresh) > 0 {
		s.fresh = make(map[string]*admin.LockInfo, len(snap.Fresh))
		s.spans = make(map[string]span, len(snap.Fresh))
		for i := range snap.Fresh {
			li := &snap.Fresh[i]
			s.fresh[li.Name] = li
			sp := span{value: li.Value, max: li.Validity}
			if prev != nil {
				if old, ok := prev.span(li.Name); ok && old.value == li.Value {
					sp.max = max(sp.max, old.max)
				}
			}
			s.spans[li.Name] = sp
		}
	}
	return s
}

// sameListing reports whether a and b are the same slice.
func sameListing(a, b []admin.LockInfo) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// size is the number of locks of the listing: what re-sorting costs.
func (s *lockSet) size() int { return len(s.idx.locks) }

// lock returns the row of name (nil when there is none).
func (s *lockSet) lock(name string) *admin.LockInfo {
	if s.gone[name] {
		return nil
	}
	if li, ok := s.fresh[name]; ok {
		return li
	}
	if i, ok := s.idx.find(name); ok {
		return &s.idx.locks[i]
	}
	return nil
}

// span returns the countdown reference of name's row.
func (s *lockSet) span(name string) (span, bool) {
	if sp, ok := s.spans[name]; ok {
		return sp, true
	}
	if i, ok := s.idx.find(name); ok {
		return span{value: s.idx.locks[i].Value, max: s.idx.spans[i]}, true
	}
	return span{}, false
}

// spanOf returns the countdown reference of a row: the longest validity seen
// for its value (0 when none).
func (s *lockSet) spanOf(li *admin.LockInfo) time.Duration {
	if sp, ok := s.span(li.Name); ok && sp.value == li.Value {
		return sp.max
	}
	return max(li.Validity, 0)
}

// rowsFor returns the rows for key k and how many rows there are before the
// filter: the listing's rows for k (computed once per listing) with the fresh
// rows in their places and the gone ones left out, in one block move.
func (s *lockSet) rowsFor(k listKey) (rows []*admin.LockInfo, listed int) {
	base := s.idx.rowsFor(k)
	listed = len(s.idx.rows)
	if len(s.fresh) == 0 && len(s.gone) == 0 {
		return base, listed
	}
	ord := newRowOrder(k)
	match := newRowMatcher(k)
	var drop []int
	leave := func(name string) { // the listing's row of name leaves the rows
		i, ok := s.idx.find(name)
		if !ok || bookkeeping(&s.idx.locks[i]) {
			return
		}
		listed--
		li := &s.idx.locks[i]
		if match != nil && !match(li) {
			return
		}
		if j, ok := slices.BinarySearchFunc(base, li, ord.compare); ok {
			drop = append(drop, j)
		}
	}
	var add []*admin.LockInfo
	for name, li := range s.fresh {
		leave(name)
		if s.gone[name] || bookkeeping(li) {
			continue
		}
		listed++
		if match == nil || match(li) {
			add = append(add, li)
		}
	}
	for name := range s.gone {
		if _, ok := s.fresh[name]; !ok {
			leave(name)
		}
	}
	slices.Sort(drop)
	slices.SortFunc(add, ord.compare)
	rows = make([]*admin.LockInfo, 0, len(base)-len(drop)+len(add))
	from := 0 // the next row of base to copy
	for _, li := range add {
		at, _ := slices.BinarySearchFunc(base, li, ord.compare)
		rows = copyKept(rows, base, from, at, &drop)
		rows = append(rows, li)
		from = at
	}
	return copyKept(rows, base, from, len(base), &drop), listed
}

// copyKept appends base[from:to] to rows but the indexes in *drop (sorted),
// consuming the ones it passes.
func copyKept(rows, base []*admin.LockInfo, from, to int, drop *[]int) []*admin.LockInfo {
	for len(*drop) > 0 && (*drop)[0] < to {
		d := (*drop)[0]
		*drop = (*drop)[1:]
		if d < from {
			continue
		}
		rows = append(rows, base[from:d]...)
		from = d + 1
	}
	return append(rows, base[from:max(from, to)]...)
}

// merged returns every row of the answer, bookkeeping keys included, sorted by
// name: what a console that compares answers itself compares.
func (s *lockSet) merged() []admin.LockInfo {
	if len(s.fresh) == 0 && len(s.gone) == 0 {
		return s.idx.locks
	}
	out := make([]admin.LockInfo, 0, len(s.idx.locks)+len(s.fresh))
	for i := range s.idx.locks {
		name := s.idx.locks[i].Name
		if _, ok := s.fresh[name]; ok || s.gone[name] {
			continue
		}
		out = append(out, s.idx.locks[i])
	}
	for name, li := range s.fresh {
		if !s.gone[name] {
			out = append(out, *li)
		}
	}
	slices.SortFunc(out, byName)
	return out
}
