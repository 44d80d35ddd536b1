package quorum

import (
	"hash/maphash"
	"math"
	"strconv"
	"sync"
)

// listStore is what the masters reported for one listing, in one compact table:
// a row per name (fence counters included), a slot per master in each row. The
// same value on several masters is kept once. put is safe for concurrent use;
// reading the table is not, and waits until every put is done.
type listStore struct {
	mu     sync.Mutex
	n      int // masters
	prefix string
	seed   maphash.Seed
	// index is by name, open addressing: each entry the low 32 bits of the
	// name's hash (where it goes, and a tag that tells most other names apart
	// without reading theirs) above row+1; 0 when free. At most 3/4 full.
	index  []uint64
	rows   int
	keys   [][]string   // chunks of storeChunk keys, the names under the prefix (no copy as they grow)
	slots  [][]listSlot // chunks of storeChunk rows, n slots each
	values [][]string   // chunks of storeChunk of the distinct values of each row; value 0 is ""
	nvals  int
	sizes  map[int32]int64 // the full length of the truncated values, by value
	pttls  map[int64]int64 // the PTTLs past an int32 of ms (24 days), by row*n+master
	types  []string        // the types of keys other than strings, by kind-2
	arena  []byte          // the bytes of the keys and values, in chunks that never move
}

// storeChunk is how many rows one chunk of a listStore's slots holds.
const storeChunk = 1024

// listSlot is one master's key of one name: 8 bytes.
type listSlot struct {
	pttl int32 // ms; -1: no TTL; bigPTTL: in pttls
	// ref is 0 when the key is absent; v+1 for a string whose value (at most
	// ValueReadCap bytes) is value(v); -(k-1) for a key of kind k >= 2.
	ref int32
}

// kind returns the slot's kind: 0: absent; 1: string; k >= 2: types[k-2].
func (sl listSlot) kind() uint8 {
	switch {
	case sl.ref == 0:
		return kindAbsent
	case sl.ref > 0:
		return kindString
	}
	return uint8(-sl.ref) + 1
}

// value returns the index of a string slot's value.
func (sl listSlot) value() int32 { return sl.ref - 1 }

// bigPTTL marks a PTTL kept in listStore.pttls.
const bigPTTL = math.MinInt32

// arenaChunk is the size of a chunk of a listStore's arena.
const arenaChunk = 64 << 10

// clone returns a copy of a+b, in the arena unless it is long.
func (s *listStore) clone(a, b string) string {
	n := len(a) + len(b)
	if n > arenaChunk/8 {
		return a + b
	}
	if len(s.arena)+n > cap(s.arena) {
		s.arena = make([]byte, 0, arenaChunk)
	}
	start := len(s.arena)
	s.arena = append(append(s.arena, a...), b...)
	return bstr(s.arena[start:])
}

// pttl returns the PTTL of the slot of master i in row (ms; -1: no TTL).
func (s *listStore) pttl(row int32, i int, sl listSlot) int64 {
	if sl.pttl == bigPTTL {
		return s.pttls[int64(row)*int64(s.n)+int64(i)]
	}
	return int64(sl.pttl)
}

const (
	kindAbsent uint8 = iota
	kindString
)

func newListStore(masters int, prefix string) *listStore {
	s := &listStore{n: masters, prefix: prefix, seed: maphash.MakeSeed(), index: make([]uint64, 1024)}
	s.addValue("", 0)
	return s
}

// name returns the name of a row.
func (s *listStore) name(row int32) string { return s.key(row)[len(s.prefix):] }

// key returns the key of a row.
func (s *listStore) key(row int32) string { return s.keys[row/storeChunk][row%storeChunk] }

// value returns a value and its full length.
func (s *listStore) value(i int32) (string, int64) {
	v := s.values[i/storeChunk][i%storeChunk]
	if size, ok := s.sizes[i]; ok {
		return v, size
	}
	return v, int64(len(v))
}

// addValue adds a value (at most ValueReadCap bytes of one of size bytes).
func (s *listStore) addValue(v string, size int64) int32 {
	i := int32(s.nvals)
	if s.nvals%storeChunk == 0 {
		s.values = append(s.values, make([]string, storeChunk))
	}
	s.values[i/storeChunk][i%storeChunk] = v
	s.nvals++
	if size != int64(len(v)) {
		if s.sizes == nil {
			s.sizes = map[int32]int64{}
		}
		s.sizes[i] = size
	}
	return i
}

// put records what master reported; names and values are copied, values shared
// with the other masters' slots of the name when equal.
func (s *listStore) put(master int, recs []listRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range recs {
		at, tag, row, ok := s.find(r.name)
		if !ok {
			row = int32(s.rows)
			s.index[at] = tag<<32 | uint64(row+1)
			if s.rows%storeChunk == 0 {
				s.slots = append(s.slots, make([]listSlot, storeChunk*s.n))
				s.keys = append(s.keys, make([]string, storeChunk))
			}
			s.keys[row/storeChunk][row%storeChunk] = s.clone(s.prefix, r.name)
			s.rows++
			if 4*s.rows > 3*len(s.index) {
				s.grow()
			}
		}
		slots := s.row(row)
		sl := listSlot{pttl: int32(r.pttl)}
		if r.pttl < -1 || r.pttl >= math.MaxInt32 {
			sl.pttl = bigPTTL
			if s.pttls == nil {
				s.pttls = map[int64]int64{}
			}
			s.pttls[int64(row)*int64(s.n)+int64(master)] = r.pttl
		}
		if k := s.kind(r.typ); k == kindString {
			sl.ref = s.sharedValue(slots, r.value, r.size) + 1
		} else {
			sl.ref = -int32(k - 1)
		}
		slots[master] = sl
	}
}

// valueOnly returns a value.
func (s *listStore) valueOnly(i int32) string { return s.values[i/storeChunk][i%storeChunk] }

// find returns the row of name, or where in the index it goes; tag is the
// name's hash, as its index entry holds it.
func (s *listStore) find(name string) (at int, tag uint64, row int32, ok bool) {
	tag = maphash.String(s.seed, name) & math.MaxUint32
	mask := len(s.index) - 1
	for i := int(tag) & mask; ; i = (i + 1) & mask {
		e := s.index[i]
		if e == 0 {
			return i, tag, 0, false
		}
		if r := int32(uint32(e)) - 1; e>>32 == tag && s.name(r) == name {
			return i, tag, r, true
		}
	}
}

// grow makes the index four times larger (fewer copies on the way to a large
// listing than doubling: a listing of 10,000 names allocates 160 KB of index
// instead of 250): each entry goes where its tag says, no name read.
func (s *listStore) grow() {
	old := s.index
	s.index = make([]uint64, 4*len(old))
	mask := len(s.index) - 1
	for _, e := range old {
		if e == 0 {
			continue
		}
		i := int(e>>32) & mask
		for s.index[i] != 0 {
			i = (i + 1) & mask
		}
		s.index[i] = e
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
func (s *listStore) sharedValue(slots []listSlot, v string, size int64) int32 {
	for _, o := range slots {
		if o.kind() == kindString {
			if ov, osize := s.value(o.value()); osize == size && ov == v {
				return o.value()
			}
		}
	}
	if v == "" {
		return 0
	}
	return s.addValue(s.clone(v, ""), size)
}

// fence returns the highest fence counter of the row's name on the masters
// where the lock key is present (0 when none).
func (s *listStore) fence(row int32, fkey []byte, answered func(i int) bool) int64 {
	_, _, frow, ok := s.find(bstr(fkey))
	if !ok {
		return 0
	}
	var best int64
	lock, f := s.row(row), s.row(frow)
	for i := range f {
		if lock[i].kind() == kindAbsent || f[i].kind() != kindString || !answered(i) {
			continue
		}
		if v, err := strconv.ParseInt(s.valueOnly(f[i].value()), 10, 64); err == nil && v > best {
			best = v
		}
	}
	return best
}
