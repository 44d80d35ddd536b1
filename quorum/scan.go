package quorum

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Scanner lists the locks incrementally, for key spaces too large to read in one
// go (a console over 100,000 locks): each Step reads one SCAN batch from every
// master (SCAN COUNT 1000 and each key's PTTL, type and at most ValueReadCap
// bytes of its value, read as Inspect reads them) and merges it
// into what the Scanner remembers, so no single call takes long. Listing returns
// the merged view at any time.
//
// A Scanner's Listing describes and may be stale by up to one pass: a lock
// released since its batch was read still shows until the pass reaches it again
// or its remembered TTL runs out (remembered TTLs are aged by the time since they
// were read). Read the names on screen with Manager.Describe for fresh rows. A
// Scanner writes nothing. It is not safe for concurrent use: one goroutine steps
// it and takes its Listings.
type Scanner struct {
	m       *Manager
	match   string
	pattern string
	nodes   []*scanNode
	now     func() time.Time
}

// scanNode is one master's pass state.
type scanNode struct {
	cursor   uint64
	running  bool // a pass is under way (cursor 0 means the next SCAN starts one)
	cur      map[string]seenKey
	last     map[string]seenKey // the previous complete pass; nil before the first
	passes   int
	err      error // the last step's error; nil once a step succeeds
	failedAt time.Time
	size     int // the keys counted by DBSIZE when the pass began, or the last pass's size
	latency  time.Duration
}

// seenKey is a key as a master reported it, and when.
type seenKey struct {
	rawKey
	at time.Time
}

// scanRetry is how often a Step retries a master that failed, while others answer:
// a dead master costs each Step a per-call deadline at most once per scanRetry.
const scanRetry = time.Second

// ScanProgress says how far a Scanner has got.
type ScanProgress struct {
	// Passes is the fewest complete passes of the masters that answered.
	Passes int
	// Fraction estimates how much of the current pass is read, from 0 to 1, over
	// the masters that answered (keys read against the keys counted at the start).
	Fraction float64
	// Complete is true once every master that answered has finished a pass: from
	// then on every lock that existed for a whole pass is in the Listing.
	Complete bool
}

// NewScanner returns a Scanner of the locks whose names match the glob match ("" or
// "*" for all; Redis MATCH syntax, as in Inspect). It does no I/O.
func (m *Manager) NewScanner(match string) *Scanner {
	if match == "" {
		match = "*"
	}
	s := &Scanner{m: m, match: match, pattern: EscapeGlob(m.cfg.prefix) + match, now: time.Now}
	for range m.nodes {
		s.nodes = append(s.nodes, &scanNode{})
	}
	return s
}

// Step reads the next batch from every master in parallel, each under the
// listing's per-call deadline; a master that has finished the current pass waits
// for the others. A master that fails is reported by Listing as not
// answering until a later Step succeeds on it (retried at most once a second
// while a quorum answers); its pass goes on where it stopped.
// Step returns an error matching ErrUnavailable when fewer than a quorum answered.
func (s *Scanner) Step(ctx context.Context) error {
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
func (s *Scanner) step(ctx context.Context, i int, st *scanNode) error {
	n := s.m.nodes[i]
	if !st.running {
		cctx, cancel := context.WithTimeout(ctx, s.m.inspectCallTimeout())
		size, err := n.client.DBSize(cctx).Result()
		cancel()
		if err != nil {
			return fmt.Errorf("DBSIZE: %w", err)
		}
		st.size = int(size)
		st.running = true
	}
	at := s.now()
	if st.cur == nil {
		st.cur = make(map[string]seenKey, st.size)
	}
	next, err := s.m.scanPass(ctx, n, st.cursor, s.pattern, 1, func(recs []listRecord) {
		for _, r := range recs {
			st.cur[strings.Clone(r.name)] = seenKey{rawKey: rawKey{typ: r.typ, value: strings.Clone(r.value), size: r.size, pttl: pttlOf(r.pttl)}, at: at}
		}
	})
	if err != nil {
		return err
	}
	st.cursor = next
	if next == 0 {
		st.last, st.cur = st.cur, nil
		st.passes++
		st.running = false
		st.size = len(st.last)
	}
	return nil
}

// Progress says how far the passes have got.
func (s *Scanner) Progress() ScanProgress {
	p := ScanProgress{Passes: -1, Complete: true}
	for _, st := range s.nodes {
		if st.err == nil && (p.Passes < 0 || st.passes < p.Passes) {
			p.Passes = st.passes
		}
	}
	if p.Passes < 0 {
		return ScanProgress{}
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
			read += len(st.cur)
			want += max(st.size, len(st.cur))
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

// Listing merges what the passes have read so far into a quorum view observed now:
// per master, the keys of the current pass, and those of the previous complete
// pass it has not read again yet; remaining TTLs are aged by the time since each
// key was read, and keys whose TTL ran out are left out. Masters whose last Step
// failed show as not answering; Listing returns the view with an error matching
// ErrUnavailable when fewer than a quorum answered, as Inspect does.
func (s *Scanner) Listing() (*Listing, error) {
	now := s.now()
	lst := &Listing{ObservedAt: now, Match: s.match, Quorum: s.m.quorum, Total: len(s.m.nodes), Masters: make([]MasterAnswer, len(s.m.nodes))}
	size := 0
	for _, st := range s.nodes {
		size = max(size, len(st.cur)+len(st.last))
	}
	names := make(map[string]struct{}, size)
	views := make([]func(string) (rawKey, bool), len(s.nodes))
	for i, st := range s.nodes {
		ans := MasterAnswer{Master: s.m.nodes[i].name, Answered: st.err == nil, Latency: st.latency}
		if st.err != nil {
			ans.Err = &NodeError{Node: ans.Master, Op: "scan", Err: s.m.nodes[i].explain(st.err)}
			ans.Error = ans.Err.Error()
			lst.Masters[i] = ans
			continue
		}
		lst.Masters[i] = ans
		for _, keys := range []map[string]seenKey{st.cur, st.last} {
			for name := range keys {
				if !strings.HasSuffix(name, ":fence") {
					names[name] = struct{}{}
				}
			}
		}
		views[i] = func(name string) (rawKey, bool) {
			sk, ok := st.cur[name]
			if !ok {
				sk, ok = st.last[name]
			}
			if !ok {
				return rawKey{}, false
			}
			if sk.pttl >= 0 {
				sk.pttl -= now.Sub(sk.at)
				if sk.pttl <= 0 {
					return rawKey{}, false
				}
			}
			return sk.rawKey, true
		}
	}
	lst.Locks = s.m.mergeViews(slices.Sorted(maps.Keys(names)), views, lst)
	return lst, s.m.unanswered("scan", lst)
}

// mergeViews builds the views of the sorted lock names from one lookup per master
// (nil: the master did not answer) and counts each master's keys in lst.Masters:
// a Scanner's Listing.
func (m *Manager) mergeViews(sorted []string, views []func(string) (rawKey, bool), lst *Listing) []LockInfo {
	out := make([]LockInfo, 0, len(sorted))
	for _, name := range sorted {
		li := LockInfo{Name: name, Key: m.Key(name), Quorum: m.quorum, Total: len(m.nodes), ObservedAt: lst.ObservedAt}
		li.Masters = make([]MasterView, 0, len(m.nodes))
		present := false
		for i, n := range m.nodes {
			mv := MasterView{Master: n.name}
			if views[i] == nil {
				mv.Err = lst.Masters[i].Err
			} else if rk, ok := views[i](name); ok {
				lst.Masters[i].Keys++
				present = true
				mv.Present, mv.Type, mv.Value, mv.PTTL = true, rk.typ, rk.value, rk.pttl
				mv.Size, mv.Truncated = rk.size, int64(len(rk.value)) < rk.size
				if f, ok := views[i](name + ":fence"); ok && f.typ == "string" {
					if v, err := strconv.ParseInt(f.value, 10, 64); err == nil && v > li.Fence {
						li.Fence = v
					}
				}
			}
			li.Masters = append(li.Masters, mv)
		}
		if !present { // every key of the name aged out since it was read
			continue
		}
		m.classify(&li)
		out = append(out, li)
	}
	return out
}

// Describe reads exactly the given lock names (and their fence counters) on every
// master in one script call per master, and merges them as Inspect does: the fresh
// rows of a long listing. Names that no master holds are absent from the result.
// It writes nothing.
func (m *Manager) Describe(ctx context.Context, names []string) (*Listing, error) {
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
