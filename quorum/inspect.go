package quorum

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redlock/redlock/internal/keyspace"
)

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
func (m *Manager) inspect(ctx context.Context, match string) (*lockListing, error) {
	lst, rd, err := m.inspectRead(ctx, match)
	rd.collect(lst)
	return lst, err
}

// inspectStream is admin.Admin.InspectStream, which documents it.
func (m *Manager) inspectStream(ctx context.Context, match string) (*lockListing, iter.Seq[*lockInfo], error) {
	lst, rd, err := m.inspectRead(ctx, match)
	return lst, rd.each, err
}

func (m *Manager) inspectRead(ctx context.Context, match string) (*lockListing, *listReader, error) {
	if match == "" {
		match = "*"
	}
	pattern := keyspace.EscapeGlob(m.cfg.prefix) + match
	return m.readListing(match, "inspect", func(n *node, _ *[]listRecord, put func([]listRecord)) error {
		_, err := m.scanPass(ctx, n, fromStart, pattern, 0, put)
		return err
	})
}

// readListing reads every master in parallel with read, records each one's
// answer (op names it in errors) and returns the listing's head and a reader of
// its locks; the error matches ErrUnavailable when fewer than a quorum answered.
func (m *Manager) readListing(match, op string, read func(n *node, buf *[]listRecord, put func([]listRecord)) error) (*lockListing, *listReader, error) {
	lst := &lockListing{Match: match, Quorum: m.quorum, Total: len(m.nodes), Masters: make([]masterAnswer, len(m.nodes))}
	st := newListStore(len(m.nodes), m.cfg.prefix)
	var wg sync.WaitGroup
	wg.Add(len(m.nodes))
	for i, n := range m.nodes {
		go func() {
			defer wg.Done()
			t0 := time.Now()
			var buf []listRecord
			err := read(n, &buf, func(recs []listRecord) { st.put(i, recs) })
			ans := masterAnswer{Master: n.name, Answered: err == nil, Latency: time.Since(t0)}
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
	lst   *lockListing
	order []int32 // the rows of lock names present on a master that answered, by name
}

// newListReader orders the lock names of st and counts each master's keys in lst.
func (m *Manager) newListReader(st *listStore, lst *lockListing) *listReader {
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

// each yields the locks in name order, reusing one lockInfo and its Owner.
func (rd *listReader) each(yield func(*lockInfo) bool) {
	m, st, lst := rd.m, rd.st, rd.lst
	li := &lockInfo{}
	owner := &Owner{}
	var in interned
	masters := make([]masterView, 0, len(m.nodes))
	answered := func(i int) bool { return lst.Masters[i].Answered }
	var fkey []byte
	for _, row := range rd.order {
		name := st.name(row)
		*li = lockInfo{Name: name, Key: st.key(row), Quorum: m.quorum, Total: len(m.nodes), ObservedAt: lst.ObservedAt, Masters: masters[:0]}
		for i, sl := range st.row(row) {
			mv := masterView{Master: m.nodes[i].name}
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
func (rd *listReader) collect(lst *lockListing) {
	lst.Locks = make([]lockInfo, 0, len(rd.order))
	n := len(rd.m.nodes)
	var views []masterView // one allocation for the masters of many locks
	var owners []Owner     // and for their owners
	for li := range rd.each {
		left := min(len(rd.order)-len(lst.Locks), 1024)
		if len(views)+n > cap(views) {
			views = make([]masterView, 0, n*left)
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
func (m *Manager) unanswered(op string, lst *lockListing) error {
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

// fromStart starts a SCAN pass at cursor 0, whatever the master.
func fromStart(string) uint64 { return 0 }
