package tui

import (
	"cmp"
	"errors"
	"regexp"
	"slices"
	"strings"

	"github.com/redlock/redlock/admin"
)

// The locks table's sort keys and filter rule: the order of the rows for a key,
// a total order so that a row is found by binary search, and the filter. The
// rows for a key are computed off the UI goroutine (rowset.go).

// sortKey is the column the locks are sorted by.
type sortKey int

const (
	sortName sortKey = iota
	sortState
	sortValidity
	sortOwner
	sortVotes
	sortKind
)

var sortNames = map[sortKey]string{sortName: "name", sortState: "state", sortValidity: "validity", sortOwner: "owner", sortVotes: "votes", sortKind: "kind"}

// listKey is what the rows depend on besides the snapshot.
type listKey struct {
	sortBy sortKey
	desc   bool
	filter string
	held   string // the names this console holds, sorted and joined by NUL
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

// rowOrder is the total order of the rows for a key: by the sort column, the
// names (naturally, ascending) between equal cells.
type rowOrder struct {
	by   sortKey
	desc bool
	held map[string]bool
}

func newRowOrder(k listKey) rowOrder { return rowOrder{by: k.sortBy, desc: k.desc, held: k.heldSet()} }

// compare orders two rows.
func (o rowOrder) compare(a, b *admin.LockInfo) int {
	c := 0
	switch o.by {
	case sortState:
		c = strings.Compare(string(a.State), string(b.State))
	case sortValidity:
		c = compareLeft(a, b)
	case sortOwner:
		c = naturalCompare(holderOf(a, o.held[a.Name]), holderOf(b, o.held[b.Name]))
	case sortVotes:
		c = cmp.Compare(a.Votes, b.Votes)
	case sortKind:
		c = naturalCompare(kindFromRow(a), kindFromRow(b))
	default:
		c = naturalCompare(a.Name, b.Name)
	}
	if o.desc {
		c = -c
	}
	if c == 0 {
		c = naturalCompare(a.Name, b.Name)
	}
	return c
}

// sorted returns a sorted copy of rows. The owner and kind cells, which take
// formatting, are computed once per row.
func (o rowOrder) sorted(rows []*admin.LockInfo) []*admin.LockInfo {
	if o.by != sortOwner && o.by != sortKind {
		out := slices.Clone(rows)
		slices.SortFunc(out, o.compare)
		return out
	}
	type keyed struct {
		li   *admin.LockInfo
		cell string
	}
	ks := make([]keyed, len(rows))
	for i, li := range rows {
		ks[i] = keyed{li: li, cell: kindFromRow(li)}
		if o.by == sortOwner {
			ks[i].cell = holderOf(li, o.held[li.Name])
		}
	}
	slices.SortFunc(ks, func(a, b keyed) int {
		c := naturalCompare(a.cell, b.cell)
		if o.desc {
			c = -c
		}
		if c == 0 {
			c = naturalCompare(a.li.Name, b.li.Name)
		}
		return c
	})
	out := make([]*admin.LockInfo, len(ks))
	for i, k := range ks {
		out[i] = k.li
	}
	return out
}

// compareLeft orders two rows by the validity they have left: none (not held)
// first, then by deadline (rows observed at different times compare by what is
// left at the same instant), no expiry last.
func compareLeft(a, b *admin.LockInfo) int {
	group := func(li *admin.LockInfo) int {
		switch {
		case li.Validity <= 0:
			return 0
		case li.Validity == admin.NoExpiry:
			return 2
		}
		return 1
	}
	if c := cmp.Compare(group(a), group(b)); c != 0 || group(a) != 1 {
		return c
	}
	return a.Deadline().Compare(b.Deadline())
}

// newRowMatcher returns whether a row passes the filter of k (nil: every row
// does): the filter is matched against the name, state, owner, library and
// kind columns (newMatcher says how).
func newRowMatcher(k listKey) func(*admin.LockInfo) bool {
	match := newMatcher(k.filter)
	if match == nil {
		return nil
	}
	held := k.heldSet()
	return func(li *admin.LockInfo) bool {
		return match(li.Name) || match(string(li.State)) || match(holderOf(li, held[li.Name])) || match(li.Library) || match(kindFromRow(li))
	}
}

// newMatcher returns the filter's rule for one column, nil for an empty filter.
// The rule (the help screen and the README say it): a filter is matched against
// the name, state, owner and library columns and the kind (kindFromRow: lock,
// multi, sem, shared, leader), ignoring case, anywhere in the
// column (as k9s and less do). Plain text matches as a substring; a filter with
// any of * ? [ is a glob: * any run of characters (/ included), ? one character,
// [a-z] a class, [!a-z] its complement, \ escapes the next character. A malformed
// glob (an unclosed [) falls back to the substring rule.
func newMatcher(filter string) func(string) bool {
	f := strings.TrimSpace(filter)
	if f == "" {
		return nil
	}
	if strings.ContainsAny(f, "*?[") {
		if re, err := globRegexp(f); err == nil {
			return re.MatchString
		}
	}
	lf := strings.ToLower(f)
	return func(col string) bool { return strings.Contains(strings.ToLower(col), lf) }
}

// globRegexp compiles an unanchored, case-insensitive regexp for glob.
func globRegexp(glob string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("(?is)")
	rs := []rune(glob)
	for i := 0; i < len(rs); i++ {
		switch r := rs[i]; r {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		case '\\':
			if i+1 < len(rs) {
				i++
				b.WriteString(regexp.QuoteMeta(string(rs[i])))
			} else {
				b.WriteString(`\\`)
			}
		case '[':
			end := slices.Index(rs[i+1:], ']')
			if end == 0 { // "[]...]": a ] first is a member
				if e := slices.Index(rs[i+2:], ']'); e >= 0 {
					end = e + 1
				} else {
					end = -1
				}
			}
			if end < 0 {
				return nil, errUnclosedClass
			}
			class := rs[i+1 : i+1+end]
			i += 1 + end
			b.WriteByte('[')
			if len(class) > 0 && (class[0] == '!' || class[0] == '^') {
				b.WriteByte('^')
				class = class[1:]
			}
			for _, c := range class {
				if c == '\\' || c == '[' || c == ']' || c == '^' {
					b.WriteByte('\\')
				}
				b.WriteRune(c)
			}
			b.WriteByte(']')
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	return regexp.Compile(b.String())
}

var errUnclosedClass = errors.New("unclosed [ in glob")

// naturalCompare orders strings as people read them: runs of digits compare by
// their value (item-2 before item-10), everything else byte by byte. Strings
// equal that way (item-01, item-1) fall back to byte order, so the order is total.
func naturalCompare(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ca, cb := a[i], b[j]
		if isDigit(ca) && isDigit(cb) {
			si, sj := i, j
			for i < len(a) && isDigit(a[i]) {
				i++
			}
			for j < len(b) && isDigit(b[j]) {
				j++
			}
			da := strings.TrimLeft(a[si:i], "0")
			db := strings.TrimLeft(b[sj:j], "0")
			if len(da) != len(db) {
				return cmp.Compare(len(da), len(db))
			}
			if c := strings.Compare(da, db); c != 0 {
				return c
			}
			continue
		}
		if ca != cb {
			return cmp.Compare(int(ca), int(cb))
		}
		i++
		j++
	}
	if c := cmp.Compare(len(a)-i, len(b)-j); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
