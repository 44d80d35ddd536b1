package tui

import (
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/redlock/redlock/admin"
)

// locksTable is the table of live locks as a component: the rows of the last
// answer under the sort and filter in force, the selection (by name, kept across
// polls) and the window of rows on screen. Its View is in locks.go.
//
// What it does per frame is bounded by the rows on screen: the rows come
// prepared with a poll's answer; when the sort, the filter or the locks held
// here change, they are computed again off the UI goroutine for a large listing
// (refresh), the previous ones shown meanwhile; the selection is found by binary
// search in the rows' order.
type locksTable struct {
	w, h    int
	focused bool

	sel    string // the selected lock's name
	sortBy sortKey
	desc   bool
	filter string
	held   string // the names this console holds, sorted and joined by NUL

	set   *lockSet // the last answer's locks (nil before the first)
	gen   int      // the answer's generation
	shown shownRows
	selAt int      // where sel was found last in shown.rows
	want  wantRows // the rows being computed off the UI goroutine
}

// shownRows are the rows the table shows: those of one answer for one key. They
// lag behind the key in force while the rows for it are being computed.
type shownRows struct {
	set    *lockSet
	gen    int
	key    listKey
	rows   []*admin.LockInfo
	listed int // the rows before the filter
}

// wantRows is the answer and key whose rows a command is computing (on).
type wantRows struct {
	gen int
	key listKey
	on  bool
}

// rowsMsg carries rows computed off the UI goroutine.
type rowsMsg struct {
	gen    int
	key    listKey
	rows   []*admin.LockInfo
	listed int
}

// inlineRows is the largest listing whose rows the UI goroutine computes
// itself when the key changes (a few milliseconds at most); a larger one's are
// computed in a command.
const inlineRows = 5000

// SetSize sets the table's width and height (title and column heads included).
func (t *locksTable) SetSize(w, h int) { t.w, t.h = w, h }

// key is the rows' key in force.
func (t *locksTable) key() listKey {
	return listKey{sortBy: t.sortBy, desc: t.desc, filter: strings.TrimSpace(t.filter), held: t.held}
}

// setHeld sets the names this console holds (they change the owner column).
func (t *locksTable) setHeld(names []string) { t.held = strings.Join(names, "\x00") }

// setSnapshot takes a new answer (generation gen) and the rows prepared with it
// (for the key in force when its poll began). The selection stays on its lock,
// or when that lock is gone, on the row that takes its place (the table does not
// jump).
func (t *locksTable) setSnapshot(set *lockSet, gen int, p *prepared) {
	t.set, t.gen = set, gen
	s := shownRows{set: set, gen: gen, key: p.key, rows: p.rows, listed: p.listed}
	if k := t.key(); p.key != k && set.size() <= inlineRows {
		s.key = k
		s.rows, s.listed = set.rowsFor(k)
	}
	t.install(s)
}

// install shows new rows, keeping the selection on its lock or its place.
func (t *locksTable) install(s shownRows) {
	place := -1
	if t.sel != "" && t.shown.set != nil {
		if i, ok := t.indexOf(t.sel); ok {
			place = i
		}
	}
	t.shown = s
	if place < 0 || len(s.rows) == 0 {
		return
	}
	if _, ok := t.indexOf(t.sel); !ok {
		t.selAt = clamp(place, 0, len(s.rows)-1)
		t.sel = s.rows[t.selAt].Name
	}
}

// stale reports whether the rows shown are not those of the answer and key in force.
func (t *locksTable) stale() bool {
	return t.set != nil && (t.shown.gen != t.gen || t.shown.key != t.key())
}

// rows returns the locks that pass the filter, in the chosen order: for a small
// listing always those of the key in force; for a large one, while the rows for
// a new key are being computed (refresh), the previous ones.
func (t *locksTable) rows() []*admin.LockInfo {
	if t.stale() && t.set.size() <= inlineRows {
		rows, listed := t.set.rowsFor(t.key())
		t.install(shownRows{set: t.set, gen: t.gen, key: t.key(), rows: rows, listed: listed})
	}
	return t.shown.rows
}

// refresh returns the command that computes the rows for the key in force off
// the UI goroutine, when they are not shown and no command is computing rows:
// one at a time (a filter typed key by key asks for new rows at every key), the
// next one started when its answer comes.
func (t *locksTable) refresh() tea.Cmd {
	if !t.stale() || t.set.size() <= inlineRows || t.want.on {
		return nil
	}
	k := t.key()
	t.want = wantRows{gen: t.gen, key: k, on: true}
	set, gen := t.set, t.gen
	return func() tea.Msg {
		rows, listed := set.rowsFor(k)
		return rowsMsg{gen: gen, key: k, rows: rows, listed: listed}
	}
}

// onRows shows rows computed off the UI goroutine, when they are still wanted.
func (t *locksTable) onRows(msg rowsMsg) {
	if t.want.gen == msg.gen && t.want.key == msg.key {
		t.want = wantRows{}
	}
	if msg.gen != t.gen || msg.key != t.key() {
		return // a newer answer or key came meanwhile: refresh asks for its rows
	}
	t.install(shownRows{set: t.set, gen: msg.gen, key: msg.key, rows: msg.rows, listed: msg.listed})
}

// listed is how many rows there are before the filter.
func (t *locksTable) listed() int {
	t.rows()
	return t.shown.listed
}

// indexOf returns the index of name's row in the rows shown: where it was last
// found, else by binary search in their order.
func (t *locksTable) indexOf(name string) (int, bool) {
	rows := t.shown.rows
	if t.selAt < len(rows) && rows[t.selAt].Name == name {
		return t.selAt, true
	}
	if t.shown.set == nil {
		return 0, false
	}
	li := t.shown.set.lock(name)
	if li == nil {
		return 0, false
	}
	i, ok := slices.BinarySearchFunc(rows, li, newRowOrder(t.shown.key).compare)
	if !ok || rows[i].Name != name {
		return 0, false
	}
	if name == t.sel {
		t.selAt = i
	}
	return i, true
}

// selIndex is the index of the selected lock in the rows (0 when it is gone).
func (t *locksTable) selIndex() int {
	i, _ := t.indexOf(t.sel)
	return i
}

// selected returns the selected lock, or nil when no row is shown.
func (t *locksTable) selected() *admin.LockInfo {
	rows := t.rows()
	if len(rows) == 0 {
		return nil
	}
	return rows[t.selIndex()]
}

// move moves the selection by d rows, within the rows.
func (t *locksTable) move(d int) {
	rows := t.rows()
	if len(rows) == 0 {
		return
	}
	t.selAt = clamp(t.selIndex()+d, 0, len(rows)-1)
	t.sel = rows[t.selAt].Name
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
	first, end := t.window(t.selIndex(), len(rows))
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
