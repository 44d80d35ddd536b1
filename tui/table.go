package tui

import (
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/redlock/redlock/quorum"
)

// locksTable is the table of live locks as a component: the rows of the last
// snapshot under the sort and filter in force, the selection (by name, kept across
// polls) and the window of rows on screen. Its View is in locks.go.
type locksTable struct {
	w, h    int
	focused bool

	sel    string // the selected lock's name
	sortBy sortKey
	desc   bool
	filter string
	held   string // the names this console holds, sorted and joined by NUL

	all    []quorum.LockInfo // the snapshot's locks, sorted by name
	gen    int               // the snapshot's generation
	listed int               // the snapshot's rows before the filter (no bookkeeping keys)
	cache  rowsCache
}

// rowsCache keeps the rows of one snapshot generation and key: a frame is drawn
// every tick, the listing changes once per poll.
type rowsCache struct {
	gen   int
	key   listKey
	rows  []quorum.LockInfo
	valid bool
}

// SetSize sets the table's width and height (title and column heads included).
func (t *locksTable) SetSize(w, h int) { t.w, t.h = w, h }

// key is the rows' key in force.
func (t *locksTable) key() listKey {
	return listKey{sortBy: t.sortBy, desc: t.desc, filter: strings.TrimSpace(t.filter), held: t.held}
}

// setHeld sets the names this console holds (they change the owner column).
func (t *locksTable) setHeld(names []string) { t.held = strings.Join(names, "\x00") }

// setSnapshot takes a new snapshot (generation gen) and, when they were prepared
// for the key in force, its rows. The selection stays on its lock, or when that
// lock is gone, on the row that takes its place (the table does not jump).
func (t *locksTable) setSnapshot(all []quorum.LockInfo, gen int, p *prepared) {
	place := -1
	if t.sel != "" && t.gen > 0 {
		place = slices.IndexFunc(t.rows(), func(li quorum.LockInfo) bool { return li.Name == t.sel })
	}
	t.all, t.gen = all, gen
	if p != nil {
		t.listed = p.listed
	} else {
		t.listed = listed(all)
	}
	if p != nil && p.key == t.key() {
		t.cache = rowsCache{gen: gen, key: p.key, rows: p.rows, valid: true}
	}
	if rows := t.rows(); place >= 0 && len(rows) > 0 && !slices.ContainsFunc(rows, func(li quorum.LockInfo) bool { return li.Name == t.sel }) {
		t.sel = rows[clamp(place, 0, len(rows)-1)].Name
	}
}

// rows returns the locks that pass the filter, in the chosen order.
func (t *locksTable) rows() []quorum.LockInfo {
	c := &t.cache
	k := t.key()
	if c.valid && c.gen == t.gen && c.key == k {
		return c.rows
	}
	*c = rowsCache{gen: t.gen, key: k, rows: filterSort(t.all, k), valid: true}
	return c.rows
}

// selIndex is the index of the selected lock in rows (0 when it is gone).
func (t *locksTable) selIndex(rows []quorum.LockInfo) int {
	if i := slices.IndexFunc(rows, func(li quorum.LockInfo) bool { return li.Name == t.sel }); i >= 0 {
		return i
	}
	return 0
}

// selected returns the selected lock, or nil when no row is shown.
func (t *locksTable) selected() *quorum.LockInfo {
	rows := t.rows()
	if len(rows) == 0 {
		return nil
	}
	return &rows[t.selIndex(rows)]
}

// move moves the selection by d rows, within the rows.
func (t *locksTable) move(d int) {
	rows := t.rows()
	if len(rows) == 0 {
		return
	}
	t.sel = rows[clamp(t.selIndex(rows)+d, 0, len(rows)-1)].Name
}

// rowsH is the number of rows the table shows.
func (t *locksTable) rowsH() int { return max(t.h-2, 1) }

// window returns the rows [first, end) the table shows of n rows when row sel is
// selected: the selection is always on screen.
func (t *locksTable) window(sel, n int) (first, end int) {
	if sel >= t.rowsH() {
		first = sel - t.rowsH() + 1
	}
	return first, min(first+t.rowsH(), n)
}

// onScreen returns the names of the locks the table shows now, and of a page of
// rows on either side: when rows on screen go, those that move onto the screen in
// their place were read by the same poll.
func (t *locksTable) onScreen() []string {
	if t.h <= 0 {
		return nil
	}
	rows := t.rows()
	first, end := t.window(t.selIndex(rows), len(rows))
	page := end - first
	first, end = max(first-page, 0), min(end+page, len(rows))
	names := make([]string, 0, end-first)
	for i := first; i < end; i++ {
		names = append(names, rows[i].Name)
	}
	return names
}

// Update handles the table's keys: movement when focused, sorting always. It
// returns whether it took the key, and a status text for the operator, if any.
func (t *locksTable) Update(msg tea.KeyMsg, k *keyMap) (handled bool, status string) {
	if t.focused {
		if d, ok := movement(msg, k, max(t.h-3, 1)); ok {
			t.move(d)
			return true, ""
		}
	}
	for sk, b := range map[sortKey]key.Binding{sortName: k.SortName, sortState: k.SortState, sortValidity: k.SortValidity, sortOwner: k.SortOwner, sortVotes: k.Vote, sortKind: k.SortKind} {
		if key.Matches(msg, b) {
			return true, t.sortOn(sk)
		}
	}
	return false, ""
}

// movement returns how many rows a movement key moves, with page rows to a page.
func movement(msg tea.KeyMsg, k *keyMap, page int) (int, bool) {
	switch {
	case key.Matches(msg, k.Up):
		return -1, true
	case key.Matches(msg, k.Down):
		return 1, true
	case key.Matches(msg, k.Top):
		return -1 << 30, true
	case key.Matches(msg, k.Bottom):
		return 1 << 30, true
	case key.Matches(msg, k.PageDown):
		return page, true
	case key.Matches(msg, k.PageUp):
		return -page, true
	}
	return 0, false
}

// sortOn sorts by column sk; the same column again reverses the order.
func (t *locksTable) sortOn(sk sortKey) string {
	if t.sortBy == sk {
		t.desc = !t.desc
	} else {
		t.sortBy, t.desc = sk, false
	}
	dir := "ascending"
	if t.desc {
		dir = "descending"
	}
	return "sorted by " + sortNames[sk] + ", " + dir
}

// sortLabel is shown in the table's title: "sort: validity↓".
func (t *locksTable) sortLabel() string {
	arrow := "↑"
	if t.desc {
		arrow = "↓"
	}
	return "sort: " + sortNames[t.sortBy] + arrow
}
