package tui

import (
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/redlock/redlock/quorum"
)

// The locks table's rows: the snapshot filtered and sorted. At 100,000 locks this
// is the costly part of the console, so it is computed once per snapshot, sort,
// filter and set of held locks, and for a new snapshot off the UI goroutine (see
// prepare).

// listKey is what the rows depend on besides the snapshot.
type listKey struct {
	sortBy sortKey
	desc   bool
	filter string
	held   string // the names this console holds, sorted and joined by NUL
}

// listKey returns the key in force now.
func (m *Model) listKey() listKey {
	return listKey{sortBy: m.sortBy, desc: m.sortDesc, filter: strings.TrimSpace(m.filter.Value()), held: strings.Join(m.heldNames(), "\x00")}
}

// heldSet returns the names of key.held as a set.
func (k listKey) heldSet() map[string]bool {
	out := map[string]bool{}
	if k.held != "" {
		for _, n := range strings.Split(k.held, "\x00") {
			out[n] = true
		}
	}
	return out
}

// visibleCache keeps the rows of one snapshot generation and key: a frame is drawn
// every tick, the listing changes once per poll.
type visibleCache struct {
	gen   int
	key   listKey
	locks []quorum.LockInfo
	valid bool
}

// visibleLocks returns the locks that pass the filter, in the chosen order. The
// filter matches every column (name, state, owner, library): a glob when it has
// glob characters, else a case-insensitive substring.
func (m *Model) visibleLocks() []quorum.LockInfo {
	c := &m.visible
	k := m.listKey()
	if c.valid && c.gen == m.snapGen && c.key == k {
		return c.locks
	}
	*c = visibleCache{gen: m.snapGen, key: k, locks: filterSort(m.snap.Locks, k), valid: true}
	return c.locks
}

// filterSort computes the rows of locks (sorted by name) for k. It reads nothing
// else, so a poll's command can run it off the UI goroutine.
func filterSort(locks []quorum.LockInfo, k listKey) []quorum.LockInfo {
	held := k.heldSet()
	owners := map[string]string{} // holder text per name, computed once
	ownerOf := func(li *quorum.LockInfo) string {
		o, ok := owners[li.Name]
		if !ok {
			o = holderOf(li, held[li.Name])
			owners[li.Name] = o
		}
		return o
	}
	out := locks
	if f := k.filter; f != "" {
		glob := strings.ContainsAny(f, "*?[")
		lf := strings.ToLower(f)
		out = nil
		for i := range locks {
			li := &locks[i]
			for _, col := range []string{li.Name, string(li.State), ownerOf(li), li.Library} {
				var ok bool
				if glob {
					ok, _ = path.Match(f, col)
				} else {
					ok = strings.Contains(strings.ToLower(col), lf)
				}
				if ok {
					out = append(out, *li)
					break
				}
			}
		}
	}
	if k.sortBy == sortName && !k.desc {
		return out // the snapshot is kept sorted by name
	}
	out = slices.Clone(out)
	less := func(a, b *quorum.LockInfo) bool {
		switch k.sortBy {
		case sortState:
			return a.State < b.State
		case sortValidity:
			return a.Validity < b.Validity
		case sortOwner:
			return ownerOf(a) < ownerOf(b)
		case sortVotes:
			return a.Votes < b.Votes
		}
		return a.Name < b.Name
	}
	sort.SliceStable(out, func(i, j int) bool {
		if k.desc {
			return less(&out[j], &out[i])
		}
		return less(&out[i], &out[j])
	})
	return out
}
