package quorum

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redlock/redlock/internal/keyspace"
)

// LockState is the quorum view of one lock name across the masters.
type LockState string

// Lock states, as `locks` and the console show them.
const (
	// StateHeld: a majority of masters agree on one value.
	StateHeld LockState = "held"
	// StatePartial: one value, present on fewer than a majority (a round in progress,
	// a failed round's leftovers, or keys expiring at different times).
	StatePartial LockState = "partial"
	// StateContested: different values on different masters, none on a majority.
	StateContested LockState = "contested"
	// StateOrphaned: leftovers with no majority and no live holder: a value whose
	// remaining quorum validity is gone, or keys of the wrong type.
	StateOrphaned LockState = "orphaned"
	// StateRevoked: the leading value is a tombstone (admin.Tombstone): an administrator
	// revoked the holder, and the name stays taken until FreeAt, or until the
	// revoked holder's release deletes the tombstone.
	StateRevoked LockState = "revoked"
)

// MasterView is what one master holds under one lock key.
type MasterView struct {
	Master string `json:"master"`
	// Present is false when the key does not exist on this master.
	Present bool `json:"present"`
	// Truncated is true when the value is longer than admin.ValueReadCap: Value then
	// holds its first admin.ValueReadCap bytes and Size its length.
	Truncated bool `json:"truncated,omitempty"`
	// Type is the Redis type of the key ("string", "hash", ...).
	Type string `json:"type,omitempty"`
	// Value is the string value, whole unless Truncated. It is a secret of its
	// owner: presenters show admin.Redact(Value), never Value.
	Value string `json:"-"`
	// Size is the length of the string value in bytes.
	Size int64 `json:"size,omitempty"`
	// PTTL is the remaining TTL on this master; -1 when the key has no TTL.
	PTTL time.Duration `json:"pttl_ns"`
	// Err is set when the master did not answer; the other fields are then empty.
	Err error `json:"-"`
}

// LockInfo is the merged view of one lock name over every master, as observed at
// ObservedAt. It describes; it does not guarantee: by the time it is read the lock
// may have changed hands.
type LockInfo struct {
	Name  string    `json:"name"`
	Key   string    `json:"key"`
	State LockState `json:"state"`
	// Votes is how many masters hold the leading value; Quorum and Total for k/N.
	Votes  int `json:"votes"`
	Quorum int `json:"quorum"`
	Total  int `json:"total"`
	// Value is the leading value (the one on most masters). Secret: show admin.Redact(Value).
	Value string `json:"-"`
	// Owner is decoded from Value when this package wrote it, else nil.
	Owner *Owner `json:"owner,omitempty"`
	// Library is admin.Library(Value), or "redisson" for hash keys.
	Library string `json:"library"`
	// Validity is the remaining validity from the quorum's view at ObservedAt: the
	// PTTL that a quorum of masters still exceeds, minus the drift budget of it; zero
	// or negative when no quorum holds the value.
	Validity   time.Duration `json:"validity_ns"`
	ObservedAt time.Time     `json:"observed_at"`
	// FreeAt is, for a revoked lock (StateRevoked), when the last of its
	// tombstones ends by the masters' TTLs as observed: the name is free then at
	// the latest. Zero for any other state.
	FreeAt time.Time `json:"free_at,omitzero"`
	// Fence is the lock's fence counter when fencing was used, else 0.
	Fence   int64        `json:"fence,omitempty"`
	Masters []MasterView `json:"masters"`
}

// RedactedValue returns admin.Redact(li.Value). When the listing decoded the value as
// one of this package's (Owner set), it shortens it without parsing it again.
func (li *LockInfo) RedactedValue() string {
	const keep = len(valueVersion) + 1 + 6 // "rl1." and 6 characters of the token
	if li.Owner != nil && li.Library == "redlock" && strings.HasPrefix(li.Value, valueVersion+".") && len(li.Value) > keep {
		return li.Value[:keep] + "…"
	}
	return redact(li.Value)
}

// KeyType is the Redis type of a listed key as the first master that has it
// reports it ("string", "zset", "hash", ...; "" when no master has it).
func (li *LockInfo) KeyType() string {
	for _, mv := range li.Masters {
		if mv.Present && mv.Type != "" {
			return mv.Type
		}
	}
	return ""
}

// Deadline returns when the quorum validity ends, as observed: ObservedAt plus Validity.
func (li *LockInfo) Deadline() time.Time { return li.ObservedAt.Add(li.Validity) }

// NoExpiry is the Validity of a lock whose keys on a quorum of masters have no TTL
// (set without PX by some other tool): it never expires by itself.
const NoExpiry = time.Duration(math.MaxInt64)

// MasterAnswer says whether one master answered a listing.
type MasterAnswer struct {
	Master string `json:"master"`
	// Answered is false when the master failed or timed out; Error then says why
	// (it never contains a password).
	Answered bool   `json:"answered"`
	Err      error  `json:"-"`
	Error    string `json:"error,omitempty"`
	// Keys is how many lock keys the master holds under the match.
	Keys    int           `json:"keys"`
	Latency time.Duration `json:"latency_ns"`
}

// Listing is every lock under the key prefix, merged over the masters, as observed
// at ObservedAt. It describes; it does not guarantee: locks change hands at any time.
type Listing struct {
	ObservedAt time.Time `json:"observed_at"`
	Match      string    `json:"match"`
	Quorum     int       `json:"quorum"`
	Total      int       `json:"total"`
	// Masters says, in declared order, which masters answered.
	Masters []MasterAnswer `json:"masters"`
	// Locks are sorted by name. A master that did not answer appears in each lock's
	// Masters with Err set.
	Locks []LockInfo `json:"locks"`
}

// Answered returns how many masters answered.
func (l *Listing) Answered() int {
	n := 0
	for _, m := range l.Masters {
		if m.Answered {
			n++
		}
	}
	return n
}

// Lock returns the entry of a lock name, or nil when no master holds it.
func (l *Listing) Lock(name string) *LockInfo {
	for i := range l.Locks {
		if l.Locks[i].Name == name {
			return &l.Locks[i]
		}
	}
	return nil
}

// inspectBatch is the SCAN COUNT of one listing call.
const inspectBatch = 1000

// inspectCallTimeout bounds one listing call on one master: the node timeout is
// sized for a single small command, a listing batch carries more (a batch of
// 1,000 keys costs a master 2-3 ms of CPU, and on a loaded host its reply can
// wait for a core far longer: at load 10-24 on two cores, 250 ms and 1 s were
// passed now and then). A listing writes nothing: waiting longer for a master
// that does not answer delays the listing by at most one call, never a lock.
func (m *Manager) inspectCallTimeout() time.Duration {
	return max(4*m.cfg.nodeTimeout, 2*time.Second)
}

// inspect is admin.Admin.Inspect, which documents it. Each batch is read
// atomically and without writing anything: a MULTI/EXEC of GETRANGE and PTTL
// on a connection of the listing's own (list_resp.go).
func (m *Manager) inspect(ctx context.Context, match string) (*Listing, error) {
	lst, rd, err := m.inspectRead(ctx, match)
	rd.collect(lst)
	return lst, err
}

// inspectStream is admin.Admin.InspectStream, which documents it.
func (m *Manager) inspectStream(ctx context.Context, match string) (*Listing, iter.Seq[*LockInfo], error) {
	lst, rd, err := m.inspectRead(ctx, match)
	return lst, rd.each, err
}

func (m *Manager) inspectRead(ctx context.Context, match string) (*Listing, *listReader, error) {
	if match == "" {
		match = "*"
	}
	pattern := keyspace.EscapeGlob(m.cfg.prefix) + match
	return m.readListing(match, "inspect", func(n *node, _ *[]listRecord, put func([]listRecord)) error {
		_, err := m.scanPass(ctx, n, 0, pattern, 0, put)
		return err
	})
}

// readListing reads every master in parallel with read, records each one's
// answer (op names it in errors) and returns the listing's head and a reader of
// its locks; the error matches ErrUnavailable when fewer than a quorum answered.
func (m *Manager) readListing(match, op string, read func(n *node, buf *[]listRecord, put func([]listRecord)) error) (*Listing, *listReader, error) {
	lst := &Listing{Match: match, Quorum: m.quorum, Total: len(m.nodes), Masters: make([]MasterAnswer, len(m.nodes))}
	st := newListStore(len(m.nodes), m.cfg.prefix)
	var wg sync.WaitGroup
	wg.Add(len(m.nodes))
	for i, n := range m.nodes {
		go func() {
			defer wg.Done()
			t0 := time.Now()
			var buf []listRecord
			err := read(n, &buf, func(recs []listRecord) { st.put(i, recs) })
			ans := MasterAnswer{Master: n.name, Answered: err == nil, Latency: time.Since(t0)}
			if err != nil {
				ans.Err = &NodeError{Node: n.name, Op: op, Err: n.explain(err)}
				ans.Error = ans.Err.Error()
			}
			lst.Masters[i] = ans
		}()
	}
	wg.Wait()
	lst.ObservedAt = time.Now()
	return lst, m.newListReader(st, lst), m.unanswered(op, lst)
}

// listReader builds the locks of a listing from its table, in name order.
type listReader struct {
	m     *Manager
	st    *listStore
	lst   *Listing
	order []int32 // the rows of lock names present on a master that answered, by name
}

// newListReader orders the lock names of st and counts each master's keys in lst.
func (m *Manager) newListReader(st *listStore, lst *Listing) *listReader {
	rd := &listReader{m: m, st: st, lst: lst, order: make([]int32, 0, st.rows)}
	for row := range int32(st.rows) {
		if strings.HasSuffix(st.name(row), fenceSuffix) {
			continue
		}
		present := false
		for i, sl := range st.row(row) {
			if sl.kind() != kindAbsent && lst.Masters[i].Answered {
				lst.Masters[i].Keys++
				present = true
			}
		}
		if present {
			rd.order = append(rd.order, row)
		}
	}
	slices.SortFunc(rd.order, func(a, b int32) int { return strings.Compare(st.name(a), st.name(b)) })
	return rd
}

// each yields the locks in name order, reusing one LockInfo and its Owner.
func (rd *listReader) each(yield func(*LockInfo) bool) {
	m, st, lst := rd.m, rd.st, rd.lst
	li := &LockInfo{}
	owner := &Owner{}
	var in interned
	masters := make([]MasterView, 0, len(m.nodes))
	answered := func(i int) bool { return lst.Masters[i].Answered }
	var fkey []byte
	for _, row := range rd.order {
		name := st.name(row)
		*li = LockInfo{Name: name, Key: st.key(row), Quorum: m.quorum, Total: len(m.nodes), ObservedAt: lst.ObservedAt, Masters: masters[:0]}
		for i, sl := range st.row(row) {
			mv := MasterView{Master: m.nodes[i].name}
			switch {
			case !answered(i):
				mv.Err = lst.Masters[i].Err
			case sl.kind() != kindAbsent:
				mv.Present, mv.Type, mv.PTTL = true, st.typeOf(sl.kind()), pttlOf(st.pttl(row, i, sl))
				if sl.kind() == kindString {
					mv.Value, mv.Size = st.value(sl.value())
				}
				mv.Truncated = int64(len(mv.Value)) < mv.Size
			}
			li.Masters = append(li.Masters, mv)
		}
		fkey = append(append(fkey[:0], name...), fenceSuffix...)
		li.Fence = st.fence(row, fkey, answered)
		m.classifyInto(li, owner, &in)
		if !yield(li) {
			return
		}
	}
}

// collect fills lst.Locks with every lock of the reader.
func (rd *listReader) collect(lst *Listing) {
	lst.Locks = make([]LockInfo, 0, len(rd.order))
	n := len(rd.m.nodes)
	var views []MasterView // one allocation for the masters of many locks
	var owners []Owner     // and for their owners
	for li := range rd.each {
		left := min(len(rd.order)-len(lst.Locks), 1024)
		if len(views)+n > cap(views) {
			views = make([]MasterView, 0, n*left)
		}
		views = append(views, li.Masters...)
		c := *li
		c.Masters = views[len(views)-n : len(views) : len(views)]
		if li.Owner != nil {
			if len(owners) == cap(owners) {
				owners = make([]Owner, 0, left)
			}
			owners = append(owners, *li.Owner)
			c.Owner = &owners[len(owners)-1]
		}
		lst.Locks = append(lst.Locks, c)
	}
}

// unanswered returns nil when a quorum of masters answered the listing, else an
// error matching ErrUnavailable that names the masters that failed.
func (m *Manager) unanswered(op string, lst *Listing) error {
	if lst.Answered() >= m.quorum {
		return nil
	}
	errs := []error{fmt.Errorf("%s: %w: %d of %d masters answered (quorum %d)", op, ErrUnavailable, lst.Answered(), len(m.nodes), m.quorum)}
	for _, a := range lst.Masters {
		if a.Err != nil {
			errs = append(errs, a.Err)
		}
	}
	return errors.Join(errs...)
}
