package quorum

import (
	"math"
	"strconv"
	"strings"
	"sync"
)

// listStore is what the masters reported for one listing, in one compact table:
// a row per name (fence counters included), a slot per master in each row. The
// same value on several masters is kept once. put is safe for concurrent use;
// reading the table is not, and waits until every put is done.
type listStore struct {
	mu     sync.Mutex
	n      int // masters
	index  map[string]int32
	names  []string
	slots  [][]listSlot // chunks of storeChunk rows, n slots each (no copy as they grow)
	values []string     // the distinct values of each row; values[0] is ""
	types  []string     // the types of keys other than strings, by kind-2
}

// storeChunk is how many rows one chunk of a listStore's slots holds.
const storeChunk = 1024

// listSlot is one master's key of one name.
type listSlot struct {
	pttl  int64 // ms; -1: no TTL
	value int32 // the string value (at most ValueReadCap bytes): values[value]
	size  int32 // the full length of a string value (Redis caps strings at 512 MB)
	kind  uint8 // 0: absent; 1: string; k >= 2: types[k-2]
}

const (
	kindAbsent uint8 = iota
	kindString
)

func newListStore(masters int) *listStore {
	return &listStore{n: masters, index: map[string]int32{}, values: []string{""}}
}

// put records what master reported; names and values are copied, values shared
// with the other masters' slots of the name when equal.
func (s *listStore) put(master int, recs []listRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range recs {
		row, ok := s.index[r.name]
		if !ok {
			name := strings.Clone(r.name)
			row = int32(len(s.names))
			s.index[name] = row
			s.names = append(s.names, name)
			if int(row)%storeChunk == 0 {
				s.slots = append(s.slots, make([]listSlot, storeChunk*s.n))
			}
		}
		slots := s.row(row)
		sl := listSlot{size: int32(min(r.size, math.MaxInt32)), pttl: r.pttl, kind: s.kind(r.typ)}
		if sl.kind == kindString {
			sl.value = s.sharedValue(slots, r.value, sl.size)
		}
		slots[master] = sl
	}
}

// row returns the slots of one row.
func (s *listStore) row(row int32) []listSlot {
	i := int(row) % storeChunk * s.n
	return s.slots[int(row)/storeChunk][i : i+s.n : i+s.n]
}

// kind returns the kind of a key type, registering a new one.
func (s *listStore) kind(typ string) uint8 {
	if typ == "string" {
		return kindString
	}
	for i, t := range s.types {
		if t == typ {
			return uint8(i) + 2
		}
	}
	if len(s.types) >= 250 { // not a real Redis: one more type would not fit a kind
		return uint8(len(s.types)) + 1
	}
	s.types = append(s.types, typ)
	return uint8(len(s.types)) + 1
}

// typeOf returns the Redis type of a kind other than absent.
func (s *listStore) typeOf(kind uint8) string {
	if kind == kindString {
		return "string"
	}
	return s.types[kind-2]
}

// sharedValue returns the index of v in values: the equal value another master
// of the row already holds, or a copy of v of its own.
func (s *listStore) sharedValue(slots []listSlot, v string, size int32) int32 {
	for _, o := range slots {
		if o.kind == kindString && o.size == size && s.values[o.value] == v {
			return o.value
		}
	}
	if v == "" {
		return 0
	}
	s.values = append(s.values, strings.Clone(v))
	return int32(len(s.values) - 1)
}

// fence returns the highest fence counter of the row's name on the masters
// where the lock key is present (0 when none).
func (s *listStore) fence(row int32, fkey []byte, answered func(i int) bool) int64 {
	frow, ok := s.index[string(fkey)]
	if !ok {
		return 0
	}
	var best int64
	lock, f := s.row(row), s.row(frow)
	for i := range f {
		if lock[i].kind == kindAbsent || f[i].kind != kindString || !answered(i) {
			continue
		}
		if v, err := strconv.ParseInt(s.values[f[i].value], 10, 64); err == nil && v > best {
			best = v
		}
	}
	return best
}
