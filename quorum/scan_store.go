package quorum

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// scanStore is what a Scanner remembers of the masters' keys: a row per name
// (fence counters included), a slot per master in each row, updated in place as
// the batches come (a key read again as it was changes nothing and allocates
// nothing), and of each row the lock it was last merged into, kept until one of
// its slots changes or time alone may change its state. Its memory is that of
// one copy of the key space, and a pass over an unchanged key space costs no
// merge. put is safe for concurrent use; the rest is the Scanner's goroutine's.
type scanStore struct {
	mu     sync.Mutex
	n      int              // masters
	epoch  time.Time        // slots' expiries count from it
	index  map[string]int32 // by name, the row
	count  int32            // rows made
	names  [][]string       // chunks of scanChunk rows' names; "" for a row that is free
	slots  [][]scanSlot     // chunks of scanChunk rows' slots, n per row
	rows   [][]scanRow      // chunks of scanChunk rows
	free   []int32          // rows free for reuse
	freed  []int32          // rows freed since the last listing: reused after it
	added  []int32          // rows added since the last listing
	order  []int32          // the rows of the last listing, by name
	dirty  int              // rows marked dirty since the last listing
	last   []lockInfo       // the last listing's locks (shared with its caller)
	lastOf []string         // the last listing's master errors ("" answered): its rows hold them
	keys   []int            // the last listing's key count of each master
	until  int64            // ns after epoch: the last listing holds until then if nothing is put
}

// scanChunk is how many rows a chunk of the table holds: the table grows a chunk
// at a time, nothing copied.
const scanChunk = 1024

// scanSlot is one master's key of one name.
type scanSlot struct {
	value string // at most ValueReadCap bytes of a string value
	typ   string // "" when absent
	size  int64  // the full length of a string value
	end   int64  // when the key expires, ns after epoch; noEnd without TTL
	seq   int32  // the master's pass that read it last
}

// noEnd is the expiry of a key without TTL.
const noEnd = math.MaxInt64

// scanRow is what a row's merged lock depends on.
type scanRow struct {
	at      int32 // the row's lock in last; -1 when it has none
	dirty   bool  // a slot changed since
	recheck int64 // ns after epoch: from then on time alone may change its state
}

func newScanStore(masters int, epoch time.Time) *scanStore {
	return &scanStore{n: masters, epoch: epoch, index: map[string]int32{}}
}

// since returns t as ns after the store's epoch.
func (s *scanStore) since(t time.Time) int64 { return int64(t.Sub(s.epoch)) }

// slotsOf returns the slots of a row.
func (s *scanStore) slotsOf(row int32) []scanSlot {
	i := int(row%scanChunk) * s.n
	return s.slots[row/scanChunk][i : i+s.n : i+s.n]
}

// name returns the name of a row ("" for a free one).
func (s *scanStore) name(row int32) string { return s.names[row/scanChunk][row%scanChunk] }

// row returns a row's state.
func (s *scanStore) row(row int32) *scanRow { return &s.rows[row/scanChunk][row%scanChunk] }

// put records what master reported in its pass seq, read at at, and returns how
// many of the keys the pass had not read yet; names and values are copied when
// they are new, values shared between the masters of a row when equal.
func (s *scanStore) put(master int, seq int32, at time.Time, recs []listRecord) (fresh int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.since(at)
	for _, r := range recs {
		row, ok := s.index[r.name]
		if !ok {
			row = s.newRow(strings.Clone(r.name))
		}
		sl := &s.slotsOf(row)[master]
		end := int64(noEnd)
		if r.pttl >= 0 {
			end = now + r.pttl*int64(time.Millisecond)
		}
		if sl.typ != r.typ || sl.size != r.size || sl.value != r.value || !sameEnd(sl.end, end) {
			sl.typ, sl.size, sl.value = r.typ, r.size, s.shared(row, r.value)
			s.changed(row)
		}
		// The expiry moves with the reads (a few ms either way): the first one
		// read is kept while the key is unchanged, as its lock was merged from it.
		if sl.seq == 0 || !sameEnd(sl.end, end) {
			sl.end = end
		}
		if sl.seq != seq {
			fresh++
		}
		sl.seq = seq
	}
	return fresh
}

// endSlack is how far the expiry of a key read again may be from the one read
// before for the key to count as unchanged: the reads' own timing (the time from
// a batch's start to the master's reply) moves it by that much, an extension by
// more.
const endSlack = int64(50 * time.Millisecond)

func sameEnd(a, b int64) bool {
	if a == noEnd || b == noEnd {
		return a == b
	}
	return a-b <= endSlack && b-a <= endSlack
}

// shared returns a copy of v, or the equal value another master's slot of row
// holds.
func (s *scanStore) shared(row int32, v string) string {
	for _, o := range s.slotsOf(row) {
		if o.typ != "" && o.value == v {
			return o.value
		}
	}
	return strings.Clone(v)
}

// changed marks row's lock to be merged again, and the lock of a fence counter's
// name too.
func (s *scanStore) changed(row int32) {
	s.mark(row)
	if name, ok := strings.CutSuffix(s.name(row), fenceSuffix); ok {
		if lock, ok := s.index[name]; ok {
			s.mark(lock)
		}
	}
}

// mark marks a row dirty.
func (s *scanStore) mark(row int32) {
	if rw := s.row(row); !rw.dirty {
		rw.dirty = true
		s.dirty++
	}
}

// newRow adds a row for name.
func (s *scanStore) newRow(name string) int32 {
	var row int32
	if n := len(s.free); n > 0 {
		row, s.free = s.free[n-1], s.free[:n-1]
		clear(s.slotsOf(row))
	} else {
		row = s.count
		s.count++
		if row%scanChunk == 0 {
			s.names = append(s.names, make([]string, scanChunk))
			s.slots = append(s.slots, make([]scanSlot, scanChunk*s.n))
			s.rows = append(s.rows, make([]scanRow, scanChunk))
		}
	}
	s.names[row/scanChunk][row%scanChunk] = name
	*s.row(row) = scanRow{at: -1}
	s.index[name] = row
	s.added = append(s.added, row)
	s.changed(row)
	return row
}

// endPass forgets the keys of master that its pass seq did not read (the pass
// is complete: they are gone), and the rows left without any key.
func (s *scanStore) endPass(master int, seq int32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for row := range s.count {
		if s.name(row) == "" {
			continue
		}
		slots := s.slotsOf(row)
		if sl := &slots[master]; sl.typ != "" && sl.seq != seq {
			*sl = scanSlot{}
			s.changed(row)
		}
		if !slices.ContainsFunc(slots, func(sl scanSlot) bool { return sl.typ != "" }) {
			delete(s.index, s.name(row))
			s.names[row/scanChunk][row%scanChunk] = ""
			s.freed = append(s.freed, row)
		}
	}
}

// view returns master i's key of row as observed at now (ns after epoch): its
// PTTL aged since it was read; false when it is absent or its TTL ran out.
func (s *scanStore) view(row int32, i int, now int64) (scanSlot, time.Duration, bool) {
	sl := s.slotsOf(row)[i]
	if sl.typ == "" {
		return sl, 0, false
	}
	if sl.end == noEnd {
		return sl, -1, true
	}
	left := time.Duration(sl.end - now)
	return sl, left, left > 0
}

// listing builds the locks of a listing observed at now: the rows in name order
// (fence counters left out, with them their lock's Fence), each from the keys of
// the masters that answered (errs[i] == "" for those; errs of the others in
// answers), each master's keys counted in answers. A row merged for an earlier
// listing that has not changed since, under the same answers, is that listing's
// lock: its ObservedAt is when it was merged, its Validity and PTTLs count from
// then. When no row changed, the locks are the last listing's, the same slice.
func (s *scanStore) listing(m *Manager, at time.Time, answers []masterAnswer) []lockInfo {
	now := s.since(at)
	errs := make([]string, len(answers))
	for i, a := range answers {
		if !a.Answered {
			errs[i] = a.Error
		}
	}
	remerge := !slices.Equal(errs, s.lastOf)
	if !remerge && s.dirty == 0 && len(s.added) == 0 && len(s.freed) == 0 && now < s.until {
		// Nothing was put that changed a lock, nor can time have changed one.
		for i := range answers {
			answers[i].Keys = s.keys[i]
		}
		return s.last
	}
	s.sortAdded()
	out := make([]lockInfo, 0, len(s.order))
	until := int64(noEnd)
	var masters []masterView // one allocation for the masters of many locks
	var owners []Owner       // and for their owners
	var in interned
	var fkey []byte
	for _, row := range s.order {
		name := s.name(row)
		rw := s.row(row)
		if strings.HasSuffix(name, fenceSuffix) {
			rw.dirty = false
			continue
		}
		present := false
		for i := range s.n {
			if errs[i] == "" {
				if _, _, ok := s.view(row, i, now); ok {
					answers[i].Keys++
					present = true
				}
			}
		}
		if !present {
			*rw = scanRow{at: -1}
			continue
		}
		if !remerge && !rw.dirty && rw.at >= 0 && now < rw.recheck {
			li := s.last[rw.at]
			rw.at = int32(len(out))
			until = min(until, rw.recheck)
			out = append(out, li)
			continue
		}
		if len(masters)+s.n > cap(masters) {
			masters = make([]masterView, 0, s.n*min(1024, len(s.order)))
		}
		li := lockInfo{Name: name, Key: m.Key(name), Quorum: m.quorum, Total: s.n, ObservedAt: at}
		recheck := int64(noEnd)
		// From this much PTTL left on, the drift budget takes a key's whole
		// validity (or it expires): its lock's state may change.
		floor := int64(m.cfg.drift(0)) + int64(time.Millisecond)
		if f := m.cfg.driftFactor; f < 1 {
			floor = int64(float64(m.cfg.drift(0))/(1-f)) + int64(time.Millisecond)
		}
		for i := range s.n {
			mv := masterView{Master: answers[i].Master}
			if errs[i] != "" {
				mv.Err = answers[i].Err
			} else if sl, pttl, ok := s.view(row, i, now); ok {
				mv.Present, mv.Type, mv.Value, mv.PTTL = true, sl.typ, sl.value, pttl
				mv.Size, mv.Truncated = sl.size, int64(len(sl.value)) < sl.size
				if sl.end != noEnd {
					recheck = min(recheck, sl.end-floor)
				}
			}
			masters = append(masters, mv)
		}
		li.Masters = masters[len(masters)-s.n : len(masters) : len(masters)]
		fkey = append(append(fkey[:0], name...), fenceSuffix...)
		li.Fence = s.fence(row, fkey, errs, now, &recheck)
		var o Owner
		m.classifyInto(&li, &o, &in)
		if li.Owner != nil {
			if len(owners) == cap(owners) {
				owners = make([]Owner, 0, min(1024, len(s.order)))
			}
			owners = append(owners, o)
			li.Owner = &owners[len(owners)-1]
		}
		*rw = scanRow{at: int32(len(out)), recheck: recheck}
		until = min(until, recheck)
		out = append(out, li)
	}
	s.keys = s.keys[:0]
	for _, a := range answers {
		s.keys = append(s.keys, a.Keys)
	}
	s.last, s.lastOf, s.until, s.dirty = out, errs, until, 0
	return out
}

// sortAdded puts the rows added since the last listing in order and leaves out
// the rows freed since, which can then be reused.
func (s *scanStore) sortAdded() {
	if len(s.added) == 0 && len(s.freed) == 0 {
		return
	}
	byName := func(a, b int32) int { return strings.Compare(s.name(a), s.name(b)) }
	added := slices.DeleteFunc(s.added, func(r int32) bool { return s.name(r) == "" })
	slices.SortFunc(added, byName)
	kept := slices.DeleteFunc(s.order, func(r int32) bool { return s.name(r) == "" })
	order := make([]int32, 0, len(kept)+len(added))
	i := 0
	for _, r := range kept {
		for i < len(added) && byName(added[i], r) < 0 {
			order = append(order, added[i])
			i++
		}
		order = append(order, r)
	}
	s.order = append(order, added[i:]...)
	s.added = s.added[:0]
	s.free = append(s.free, s.freed...)
	s.freed = s.freed[:0]
}

// fence returns the highest fence counter of a lock (fkey: its name and the
// fence suffix) on the masters that answered where the lock's key is present,
// and lowers *recheck to when a counter read expires.
func (s *scanStore) fence(row int32, fkey []byte, errs []string, now int64, recheck *int64) int64 {
	frow, ok := s.index[string(fkey)]
	if !ok {
		return 0
	}
	var best int64
	for i := range s.n {
		if errs[i] != "" {
			continue
		}
		if _, _, ok := s.view(row, i, now); !ok {
			continue
		}
		if f, _, ok := s.view(frow, i, now); ok && f.typ == "string" {
			*recheck = min(*recheck, f.end)
			if v, err := strconv.ParseInt(f.value, 10, 64); err == nil && v > best {
				best = v
			}
		}
	}
	return best
}
