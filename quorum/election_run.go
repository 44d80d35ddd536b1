package quorum

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/redlock/redlock/internal/wire"
)

// The election's keys: the leadership, its term counter and the leader's record.
func (e *Election) keys() (leader, counter, record string) {
	leader = e.Key()
	return leader, leader + fenceSuffix, leader + termSuffix
}

// checkLeaderValue bounds a published value before any I/O.
func checkLeaderValue(value string) error {
	if len(value) > maxLeaderValue {
		return fmt.Errorf("%w: a leader's value of %d bytes, more than %d", ErrInvalidArgument, len(value), maxLeaderValue)
	}
	return nil
}

func (e *Election) campaign(ctx context.Context, value string, ttl time.Duration, opts []LockOption) (*Leadership, error) {
	if err := checkLeaderValue(value); err != nil {
		return nil, err
	}
	var lc lockConfig
	for _, o := range opts {
		o(&lc)
	}
	if lc.semaphore || lc.shared || lc.multi != nil || lc.fair || lc.fencing || lc.wait != 0 {
		return nil, fmt.Errorf("%w: Campaign takes only WithKeepAlive, WithLockOwner and WithLossWatch", ErrInvalidArgument)
	}
	if lc.keepAlive == nil {
		opts = append(slices.Clip(opts), WithKeepAlive(KeepAlive{Fraction: defaultKeepAliveFraction}))
	}
	var acq termer = &electAcquirer{e: e, value: value}
	if lc.override != nil { // a test's broken term
		a, err := lc.override(e.m, e.name, &lc)
		if err != nil {
			return nil, err
		}
		acq = a.(termer)
	}
	opts = append(slices.Clip(opts), func(c *lockConfig) {
		c.override = func(*Manager, string, *lockConfig) (acquirer, error) { return acq, nil }
	})
	l, err := e.m.acquire(ctx, e.name, ttl, math.MaxInt, primSpec{}, opts)
	if err != nil {
		return nil, err
	}
	return &Leadership{Lock: l, e: e, term: acq.termOf(), value: value}, nil
}

// termer is the acquirer of a leadership: it tells the term it handed out.
type termer interface {
	acquirer
	termOf() int64
}

func (a *electAcquirer) termOf() int64 { return a.term }

// electAcquirer takes the leadership: a plain round on NAME:leader, then the term.
type electAcquirer struct {
	e     *Election
	value string
	// Set by won.
	term  int64
	since time.Time
}

func (a *electAcquirer) waitKey() string { return a.e.Key() }

func (a *electAcquirer) describe(o *Owner) { o.Kind = ownerLeader }

func (a *electAcquirer) round(ctx context.Context, start time.Time, value string, ttl time.Duration, fw *fairWaiter) (*Lock, error) {
	return a.e.m.round(ctx, start, a.e.name, a.e.Key(), value, ttl, fw, nil, true)
}

// won hands out the term: read the counter from every master that answers (only
// the masters that hold our leadership count towards the quorum), then raise it
// to max+1 and write the record on a quorum, as WithFencing raises a fence.
func (a *electAcquirer) won(ctx context.Context, l *Lock) error {
	leader, counter, record := a.e.keys()
	since := time.Now()
	next, err := a.e.m.raiseCounter(ctx, l, counter, "term", func(ctx context.Context, next int64) *Report {
		return a.e.m.scriptOnAll(ctx, opFenceRaise, l.key, electTermScript, []string{leader, counter, record}, func(_ int, r int64) (Outcome, error) {
			return raised(r, next)
		}, l.value, strconv.FormatInt(next, 10), strconv.FormatInt(since.UnixMilli(), 10), a.value, wakeChannel(leader))
	})
	if err != nil {
		return err
	}
	a.term, a.since = next, since
	l.fence = next
	return nil
}

// electView is what one master holds of an election.
type electView struct {
	holder string
	pttl   time.Duration
	term   int64
	since  int64
	value  string
	seq    int64 // the proclamation that wrote value, 0 for Campaign's
}

func (e *Election) leader(ctx context.Context) (*LeaderInfo, error) {
	m := e.m
	leader, _, record := e.keys()
	views := make([]electView, len(m.nodes))
	// A master's PTTL may have been read at any moment of the round: count the
	// whole round against it, or a slow reply reports a leadership that has
	// already ended.
	sent := time.Now()
	rep := m.scriptEach(ctx, "leader", leader, electReadScript, "*", nil, []string{leader, record}, func(i int, r *wire.Result) (Outcome, error) {
		v, err := parseElectView(r.Array)
		if err != nil {
			return OutcomeError, err
		}
		views[i] = v
		return OutcomeOK, nil
	})
	observed := time.Now()
	if rep.Votes < m.quorum {
		return nil, &RoundError{Report: *rep, Kind: ErrUnavailable}
	}
	// Group the masters that answered by the token holding the leadership with
	// its record.
	type group struct {
		v     electView
		pttls []time.Duration
		seqs  []int64
		vals  map[int64]string // by proclamation number
	}
	var groups []*group
	for i, v := range views {
		if rep.Nodes[i].Outcome != OutcomeOK || v.holder == "" || v.term == 0 {
			continue
		}
		j := slices.IndexFunc(groups, func(g *group) bool { return g.v.holder == v.holder && g.v.term == v.term })
		if j < 0 {
			groups = append(groups, &group{v: v, vals: map[int64]string{}})
			j = len(groups) - 1
		}
		groups[j].pttls = append(groups[j].pttls, v.pttl)
		groups[j].seqs = append(groups[j].seqs, v.seq)
		groups[j].vals[v.seq] = v.value
	}
	for _, g := range groups {
		if len(g.pttls) < m.quorum {
			continue
		}
		slices.SortFunc(g.pttls, func(a, b time.Duration) int { return int(ttlRank(b) - ttlRank(a)) })
		q := g.pttls[m.quorum-1]
		validity := q - m.cfg.drift(q) - observed.Sub(sent)
		if q < 0 {
			validity = noExpiry
		}
		if validity <= 0 {
			break
		}
		li := &LeaderInfo{Election: e.name, Term: g.v.term, Since: time.UnixMilli(g.v.since), Validity: validity,
			ObservedAt: observed, Votes: len(g.pttls), Quorum: m.quorum}
		// The latest value a quorum has (a master holding a later proclamation
		// had this one before): a proclamation that reached only a minority is
		// not reported.
		slices.Sort(g.seqs)
		li.Value = g.vals[g.seqs[len(g.seqs)-m.quorum]]
		if pv, err := parseValue(g.v.holder); err == nil {
			owner := pv.Owner
			li.Owner = &owner
		}
		return li, nil
	}
	return nil, fmt.Errorf("%w: election %s (%d of %d masters answered)", ErrNoLeader, e.name, rep.Votes, len(m.nodes))
}

// parseElectView decodes elect_read.lua's reply.
func parseElectView(r []wire.Result) (electView, error) {
	if len(r) != 6 {
		return electView{}, fmt.Errorf("%w: election read gave %d values", wire.ErrProtocol, len(r))
	}
	str := func(e wire.Result) string {
		if e.Type == '$' {
			return e.Str
		}
		return ""
	}
	v := electView{holder: str(r[0]), value: str(r[4])}
	if r[1].Type == ':' {
		ms := r[1].Int
		v.pttl = time.Duration(ms) * time.Millisecond
		if ms < 0 {
			v.pttl = time.Duration(ms)
		}
	}
	if s := str(r[2]); s != "" {
		t, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return electView{}, fmt.Errorf("%w: term %q", wire.ErrProtocol, s)
		}
		if t < 1 {
			return v, nil // no term the election hands out (a hostile record): no leader's record
		}
		v.term = t
		v.since, _ = strconv.ParseInt(str(r[3]), 10, 64)
		v.seq, _ = strconv.ParseInt(str(r[5]), 10, 64)
	}
	return v, nil
}

// observePoll is the longest time Observe goes without a quorum read.
const observePoll = time.Second

func (e *Election) observe(ctx context.Context) <-chan Observation {
	out := make(chan Observation, 1)
	go func() {
		defer close(out)
		var w *waiter
		var mk *waitMark // a resignation publishes only where a listener marked (waitmark.go)
		if h := e.m.hub(); h != nil {
			var unreg func()
			w, unreg = h.register(e.Key(), "")
			defer unreg()
			mk, _ = e.m.newWaitMark() // without one, the poll is the fallback
		}
		var last *Observation
		for ctx.Err() == nil && !e.m.closed() { // a closed Manager reads nothing
			if mk != nil {
				e.m.markWaiting(ctx, e.Key(), mk, observePoll) // before the read: a release after it publishes
			}
			since := time.Now()
			li, err := e.leader(ctx)
			if ctx.Err() != nil {
				return
			}
			obs := Observation{Leader: li, Err: err}
			if last == nil || changed(*last, obs) {
				// The newest replaces an unread one: a slow reader misses
				// intermediate changes, never the latest.
				select {
				case <-out:
				default:
				}
				out <- obs
				last = &obs
			}
			wait := observePoll
			if li != nil && li.Validity < wait {
				wait = max(li.Validity, time.Millisecond)
			}
			if _, err := e.m.await(ctx, w, since, wait); err != nil {
				return
			}
		}
	}()
	return out
}

// changed reports whether b reports another leader than a: another term or
// value, nobody leading, or a failed read after a good one (and the reverse).
func changed(a, b Observation) bool {
	switch {
	case (a.Leader == nil) != (b.Leader == nil):
		return true
	case a.Leader == nil:
		return (a.Err == nil) != (b.Err == nil) || errors.Is(a.Err, ErrNoLeader) != errors.Is(b.Err, ErrNoLeader)
	}
	return a.Leader.Term != b.Leader.Term || a.Leader.Value != b.Leader.Value
}

func (l *Leadership) proclaim(ctx context.Context, value string) error {
	if err := checkLeaderValue(value); err != nil {
		return err
	}
	l.mu.Lock()
	l.seq++
	seq := l.seq
	l.mu.Unlock()
	return l.proclaimSeq(ctx, value, seq)
}

// proclaimSeq runs proclamation number seq of value: refused on a master that
// holds a later one, so the masters keep the latest proclamation each took, and
// Value moves only forward (to a higher number that a quorum took).
func (l *Leadership) proclaimSeq(ctx context.Context, value string, seq int64) error {
	m := l.e.m
	leader, _, record := l.e.keys()
	later := 0
	rep := m.scriptOnAll(ctx, "proclaim", leader, electProclaimScript, []string{leader, record}, func(_ int, r int64) (Outcome, error) {
		switch r {
		case 1:
			return OutcomeOK, nil
		case 2:
			later++
		}
		return OutcomeForeign, nil
	}, l.Lock.value, value, wakeChannel(leader), strconv.FormatInt(seq, 10))
	now := m.cfg.clock.Now()
	m.unquarantinedVotes(rep, now)
	if rep.Votes >= m.quorum && now.Before(l.Lock.Until()) {
		l.mu.Lock()
		if seq > l.valueSeq {
			l.value, l.valueSeq = value, seq
		}
		l.mu.Unlock()
		return nil
	}
	if !now.Before(l.Lock.Until()) {
		return fmt.Errorf("%w: leadership of %s ended before the proclamation", ErrLost, l.e.name)
	}
	if later > 0 && rep.count(OutcomeForeign)-later <= len(m.nodes)-m.quorum {
		return fmt.Errorf("%w: of %s: a later one is on %d of %d masters", ErrSuperseded, l.e.name, later, len(m.nodes))
	}
	return m.roundError(rep)
}
