package quorum

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redlock/redlock/internal/keyspace"
)

// scanner is admin.Scanner, which documents it: an incremental listing whose
// store (scan_store.go) keeps one copy of the key space.
type scanner struct {
	m       *Manager
	match   string
	pattern string
	nodes   []*scanNode
	store   *scanStore
	now     func() time.Time
}

// scanNode is one master's pass state.
type scanNode struct {
	cursor   uint64
	running  bool  // a pass is under way (cursor 0 means the next SCAN starts one)
	seq      int32 // the pass under way, counting every pass begun
	read     int   // the keys the pass under way has read
	passes   int
	err      error // the last step's error; nil once a step succeeds
	failedAt time.Time
	size     int // the keys counted by DBSIZE when the pass began, or the last pass's size
	latency  time.Duration
	runID    string // the master's run_id on the connection of the last step ("" unknown)
}

// from is the cursor the next step of st starts from on a connection to a
// master of run_id runID: where the pass stopped, unless the master is another
// process than at the last step (it restarted: a SCAN cursor means nothing to
// it, and going on would skip keys), in which case the pass starts again from 0
// as a new pass: the keys read there before count as read by an earlier pass,
// shown until read again and forgotten at the pass's end unless they are (the
// new process may not hold them: a master restarted empty).
func (st *scanNode) from(runID string) uint64 {
	if runID == "" {
		return st.cursor
	}
	if st.runID != "" && runID != st.runID && st.cursor != 0 {
		st.cursor, st.read = 0, 0
		st.seq++
	}
	st.runID = runID
	return st.cursor
}

// scanRetry is how often a Step retries a master that failed, while others answer:
// a dead master costs each Step a per-call deadline at most once per scanRetry.
const scanRetry = time.Second

// newScanner is admin.Admin.NewScanner, which documents it.
func (m *Manager) newScanner(match string) *scanner {
	if match == "" {
		match = "*"
	}
	s := &scanner{m: m, match: match, pattern: keyspace.EscapeGlob(m.cfg.prefix) + match, now: time.Now}
	for range m.nodes {
		s.nodes = append(s.nodes, &scanNode{})
	}
	return s
}

// Step reads the next batch from every master in parallel, each under the
// listing's per-call deadline; a master that has finished the current pass waits
// for the others. A master that fails is reported by lockListing as not
// answering until a later Step succeeds on it (retried at most once a second
// while a quorum answers); its pass goes on where it stopped.
// Step returns an error matching ErrUnavailable when fewer than a quorum answered.
func (s *scanner) Step(ctx context.Context) error {
	if s.store == nil {
		s.store = newScanStore(len(s.nodes), s.now())
	}
	// The masters go pass by pass together: one that has finished the current pass
	// waits for the others that answer, so a pass of the whole cluster ends when
	// the largest master's does.
	least := -1
	for _, st := range s.nodes {
		if st.err == nil && (least < 0 || st.passes < least) {
			least = st.passes
		}
	}
	var wg sync.WaitGroup
	for i, st := range s.nodes {
		if least >= 0 && (st.err == nil && st.passes > least || st.err != nil && s.now().Sub(st.failedAt) < scanRetry) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			t0 := time.Now()
			failed := st.err != nil
			st.err = s.step(ctx, i, st)
			// A master back from an outage joins the others' pass rather than
			// making them wait while it redoes, alone, every pass they made without
			// it (a master that never finished a pass still finishes its first).
			if failed && st.err == nil && st.passes > 0 && st.passes < least {
				st.passes = least
			}
			st.latency = time.Since(t0)
			if st.err != nil {
				st.failedAt = s.now()
			}
		}()
	}
	wg.Wait()
	var errs []error
	for i, st := range s.nodes {
		if st.err != nil {
			errs = append(errs, &NodeError{Node: s.m.nodes[i].name, Op: "scan", Err: s.m.nodes[i].explain(st.err)})
		}
	}
	if len(s.nodes)-len(errs) < s.m.quorum {
		return errors.Join(append([]error{fmt.Errorf("scan: %w: %d of %d masters answered (quorum %d)", ErrUnavailable, len(s.nodes)-len(errs), len(s.nodes), s.m.quorum)}, errs...)...)
	}
	return nil
}

// step reads one batch from master i.
func (s *scanner) step(ctx context.Context, i int, st *scanNode) error {
	n := s.m.nodes[i]
	if !st.running {
		var size int64
		timeout := s.m.inspectCallTimeout()
		err := n.withListConn(ctx, timeout, func(lc *listConn) (err error) {
			size, err = lc.dbSize(ctx, timeout)
			return err
		})
		if err != nil {
			return fmt.Errorf("DBSIZE: %w", err)
		}
		st.size = int(size)
		st.running = true
		st.seq++
		st.read = 0
	}
	at := s.now()
	next, err := s.m.scanPass(ctx, n, st.from, s.pattern, 1, func(recs []listRecord) {
		st.read += s.store.put(i, st.seq, at, recs)
	})
	if err != nil {
		return err
	}
	st.cursor = next
	if next == 0 {
		s.store.endPass(i, st.seq)
		st.passes++
		st.running = false
		st.size = st.read
	}
	return nil
}

// Progress says how far the passes have got.
func (s *scanner) Progress() keyspace.ScanProgress {
	p := keyspace.ScanProgress{Passes: -1, Complete: true}
	for _, st := range s.nodes {
		if st.err == nil && (p.Passes < 0 || st.passes < p.Passes) {
			p.Passes = st.passes
		}
	}
	if p.Passes < 0 {
		return keyspace.ScanProgress{}
	}
	read, want := 0, 0
	for _, st := range s.nodes {
		switch {
		case st.err != nil:
			continue
		case st.passes > p.Passes: // done with this pass, waiting for the others
			read += st.size
			want += st.size
		default:
			read += st.read
			want += max(st.size, st.read)
		}
		if st.passes == 0 {
			p.Complete = false
		}
	}
	if want > 0 {
		p.Fraction = float64(read) / float64(want)
	}
	return p
}

// lockListing merges what the passes have read so far into a quorum view observed now:
// per master, the keys of the current pass, and those of the previous complete
// pass it has not read again yet; remaining TTLs are aged by the time since each
// key was read, and keys whose TTL ran out are left out. Masters whose last Step
// failed show as not answering; lockListing returns the view with an error matching
// ErrUnavailable when fewer than a quorum answered, as Inspect does.
//
// A lock none of whose keys changed since an earlier lockListing, under the same
// masters' answers, and whose state time alone cannot have changed yet (no key
// near its expiry), is that lockListing's lockInfo, Masters and Owner shared: its
// ObservedAt is when it was merged, and its Validity and PTTLs count from then
// (its Deadline is the same). The Listings are never changed.
func (s *scanner) Listing() (*lockListing, error) {
	now := s.now()
	lst := &lockListing{ObservedAt: now, Match: s.match, Quorum: s.m.quorum, Total: len(s.m.nodes), Masters: make([]masterAnswer, len(s.m.nodes))}
	for i, st := range s.nodes {
		ans := masterAnswer{Master: s.m.nodes[i].name, Answered: st.err == nil, Latency: st.latency}
		if st.err != nil {
			ans.Err = &NodeError{Node: ans.Master, Op: "scan", Err: s.m.nodes[i].explain(st.err)}
			ans.Error = ans.Err.Error()
		}
		lst.Masters[i] = ans
	}
	if s.store != nil {
		lst.Locks = s.store.listing(s.m, now, lst.Masters)
	}
	return lst, s.m.unanswered("scan", lst)
}

// describe is admin.Admin.Describe, which documents it.
func (m *Manager) describe(ctx context.Context, names []string) (*lockListing, error) {
	keys := make([]string, 0, 2*len(names))
	for _, name := range names {
		keys = append(keys, m.Key(name), m.Key(name)+fenceSuffix)
	}
	lst, rd, err := m.readListing("", "describe", func(n *node, buf *[]listRecord, put func([]listRecord)) error {
		if len(keys) == 0 {
			return nil
		}
		_, err := m.readKeys(ctx, n, 0, "", keys, buf, put)
		return err
	})
	rd.collect(lst)
	return lst, err
}
