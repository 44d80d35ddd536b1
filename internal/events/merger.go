package events

import (
	"container/list"
	"slices"
	"time"

	"github.com/redlock/redlock/quorum"
)

// Defaults of a Merger's bounds.
const (
	// DefaultMaxNames is how many lock names a Merger tracks at most; past it the
	// least recently reported name is forgotten.
	DefaultMaxNames = 10000
	// DefaultIdle is how long a name no master reported anything about is kept.
	DefaultIdle = 10 * time.Minute
	// DefaultGrace is how long an event that reached a quorum waits for the other
	// masters' reports before it is emitted with the masters that reported.
	DefaultGrace = 150 * time.Millisecond
)

// Merger merges per-master keyspace notifications into quorum-level events.
//
// An event is a quorum of masters reporting the same operation about the same
// value: a master's `del`, `expire` or `expired` concerns the value that master was
// last seen to hold (from its `set`), so deletes of a previous holder's copies never
// count together with a delete of the next holder's key. The `expire` that Redis
// publishes right after the `set` of `SET ... PX` (or of a SETNX + EXPIRE pair) is
// part of the acquisition, not an extension; an `expire` alone (a PEXPIRE from an
// extend script) is an extension.
//
// A set whose value could not be read (Reader.ValueAfterSet) counts for nothing,
// and so do the extensions, deletes and expiries of that copy: its value is not
// known, and no other master's report tells it (the copy may be another cycle's, a
// quick holder's or a failed round's, as well as the acquisition another master
// reports at about the same time). A hold too short to be read on a quorum is left
// out, never reported half (a release without its acquisition) or as another
// value's. A delete on a master whose set the merger never saw (a lock taken before
// it started, a forgotten name) counts with an unknown value.
//
// Per master, reports come in order, but the masters' reports lag one another: an
// acquisition whose quorum completes only after a later acquisition's (a master
// of its quorum already reported the later value's set) is left out whole, its
// release with it, rather than printed as a change of hands over the later one; an
// extension is printed only of the value reported held; a release later than the
// grace of the change of hands that ended its acquisition is not printed.
//
// Once a quorum reported, the event waits at most Grace for the other masters, so
// that its Masters are the masters that really reported; it is emitted at once when
// every master did. A name's events come out in the order their quorum was reached
// (an event waiting for the other masters holds back only its name's later events).
//
// Memory is bounded whatever the key traffic: reports older than the window are
// dropped, a name no master holds is forgotten once its reports are, a name idle
// for Idle is forgotten, and at most MaxNames names are tracked (the least recently
// reported is forgotten first). A forgotten name costs accuracy, not safety: a
// later report about it has an unknown value.
//
// A Merger is not safe for concurrent use: feed it from one goroutine.
type Merger struct {
	quorum, masters int
	window          time.Duration
	// Grace, MaxNames and Idle may be changed before the first Add.
	Grace    time.Duration
	MaxNames int
	Idle     time.Duration

	keys    map[string]*keyState
	lru     *list.List // of *keyState, most recently reported at the front
	pending []*pendingEvent
	// due lists the names with reports, in the order the reports started, for expiry.
	due []due
}

type due struct {
	ks *keyState
	at time.Time
}

// keyState is what the merger knows about one lock name.
type keyState struct {
	name string
	elem *list.Element
	last time.Time // the last report about the name
	// forced: a force-expire was announced for the name, at forcedAt, and no
	// release or acquisition was reported since.
	forced   bool
	forcedAt time.Time
	// value is the value of the last acquisition emitted, "" after its release.
	value string
	// ended holds, with when, the values whose acquisition ended with an emitted
	// change of hands, or was left out because its quorum was complete only after
	// a later acquisition's: their later reports are absorbed. Kept for the window.
	ended map[string]time.Time
	// held is, per master, what it was last seen to hold (present while the master
	// holds the key).
	held map[string]holding
	// reports are the reports within the window, by kind and value (nil when none).
	reports map[reportKey]*report
}

// holding is one master's copy of a key.
type holding struct {
	// value is the value read after its set ("" when it could not be read).
	value string
	// afterSet: the master's last operation on the key was the set, whose own
	// expire may follow.
	afterSet bool
}

type reportKey struct{ kind, value string }

type report struct {
	first   time.Time
	masters []string
	at      []time.Time   // when each of masters reported
	ev      *pendingEvent // the event once a quorum reported
}

type pendingEvent struct {
	ev       Event
	r        *report
	deadline time.Time
	done     bool
	// prev is the value a change of hands replaced, while the event waits.
	prev string
}

// NewMerger returns a merger for a cluster of masters masters needing quorum
// votes; reports more than window apart are not counted together.
func NewMerger(quorum, masters int, window time.Duration) *Merger {
	return &Merger{quorum: quorum, masters: masters, window: window,
		Grace: DefaultGrace, MaxNames: DefaultMaxNames, Idle: DefaultIdle,
		keys: map[string]*keyState{}, lru: list.New()}
}

// Len returns how many lock names the merger holds state for.
func (m *Merger) Len() int { return len(m.keys) }

// Add records that master reported op ("set", "del", "expired", "expire",
// "pexpire", ...) on lock name at at; value is the key's value read right after a
// "set" ("" when unknown). It returns the events that are complete by at, in the
// order their quorum was reached (possibly none).
func (m *Merger) Add(master, name, op, value string, at time.Time) []Event {
	m.expire(at)
	if op == quorum.ForceExpiredMessage {
		// Announced on the wake-up channel, right after the master's del: the deletes
		// are a force-expire, whether the release is still waiting or yet to come.
		for _, p := range m.pending {
			if p.ev.Name == name && p.ev.Kind == Released {
				p.ev.Kind = ForceExpired
				return m.Flush(at)
			}
		}
		if ks := m.keys[name]; ks != nil {
			ks.forced, ks.forcedAt = true, at
		}
		return m.Flush(at)
	}
	kind := kindOf(op)
	if kind == "" {
		return m.Flush(at)
	}
	ks := m.state(name, at)
	h, holds := ks.held[master]
	switch kind {
	case Acquired:
		ks.held[master] = holding{value: value, afterSet: true}
		if value == "" {
			// Unread: counts for nothing (see Merger).
			return m.Flush(at)
		}
	case Extended:
		if h.afterSet {
			// The expire of the set itself (SET ... PX publishes set, then expire).
			h.afterSet = false
			ks.held[master] = h
			return m.Flush(at)
		}
		if holds && h.value == "" {
			// An extension of a copy whose value was never read: left out, as its
			// acquisition was.
			return m.Flush(at)
		}
		value = h.value
	default: // released, expired
		value = h.value
		if holds {
			delete(ks.held, master)
			if value == "" {
				// The end of a copy whose value was never read: it counts for no
				// release, as its set counted for no acquisition.
				m.forgetIfIdle(ks)
				return m.Flush(at)
			}
		}
	}
	m.count(ks, master, kind, value, at)
	m.forgetIfIdle(ks)
	return m.Flush(at)
}

func kindOf(op string) string {
	switch op {
	case "set":
		return Acquired
	case "expire", "pexpire", "expireat", "pexpireat":
		return Extended
	case "del", "unlink":
		return Released
	case "expired", "evicted":
		return Expired
	}
	return ""
}

// state returns the state of name, created when new, marked as just reported.
func (m *Merger) state(name string, at time.Time) *keyState {
	ks := m.keys[name]
	if ks == nil {
		ks = &keyState{name: name, held: map[string]holding{}}
		ks.elem = m.lru.PushFront(ks)
		m.keys[name] = ks
		for m.MaxNames > 0 && len(m.keys) > m.MaxNames {
			m.forget(m.lru.Back().Value.(*keyState))
		}
	} else {
		m.lru.MoveToFront(ks.elem)
	}
	ks.last = at
	return ks
}

// count adds master's report of kind about value and starts the event when a
// quorum reported it.
func (m *Merger) count(ks *keyState, master, kind, value string, at time.Time) {
	k := reportKey{kind, value}
	r := ks.reports[k]
	if r == nil || at.Sub(r.first) > m.window {
		if ks.reports == nil {
			ks.reports = map[reportKey]*report{}
		}
		r = &report{first: at}
		ks.reports[k] = r
		m.due = append(m.due, due{ks: ks, at: at})
	}
	for _, x := range r.masters {
		if x == master {
			return
		}
	}
	r.masters = append(r.masters, master)
	r.at = append(r.at, at)
	if r.ev != nil {
		// A report after the quorum: counted in the event while it waits, and absorbed
		// afterwards (it never starts a second event).
		if !r.ev.done {
			r.ev.ev.Masters = append(r.ev.ev.Masters, master)
			if len(r.masters) >= m.masters && r.ev.prev == "" {
				r.ev.deadline = at
			}
		}
		return
	}
	if len(r.masters) < m.quorum {
		return
	}
	if kind == Extended && value != "" && value != ks.value {
		// An extension of a value not reported held: its release was reported (an
		// extension in flight at the release reached each master before its delete,
		// but its quorum of reports completed after the release's), or its
		// acquisition was never reported. Absorbed.
		r.ev = &pendingEvent{r: r, done: true}
		return
	}
	if _, gone := ks.ended[value]; gone && kind != Acquired && value != "" {
		// The end (or an extension) of a value whose acquisition already ended with
		// an emitted change of hands (its release lagged the next holder's sets by
		// more than the grace), or was left out as stale: absorbed.
		r.ev = &pendingEvent{r: r, done: true}
		return
	}
	if kind == Acquired && ks.value != "" && value != ks.value && ks.before(r) {
		// This cycle came before the acquisition reported held now, and a master
		// whose reports lag completed its quorum only now. It is no change of hands:
		// left out whole, its release with it.
		r.ev = &pendingEvent{r: r, done: true}
		ks.end(value, at)
		return
	}
	if (kind == Released || kind == Expired) && value != "" && value != ks.value && !m.replacing(ks.name, value) {
		// The end of a value never reported held (its acquisition was left out, or
		// its reports were further apart than the window): never a release without
		// its acquisition.
		r.ev = &pendingEvent{r: r, done: true}
		return
	}
	ev := Event{At: at, Kind: kind, Name: ks.name, Masters: append([]string(nil), r.masters...)}
	switch kind {
	case Acquired:
		ev.Value = value
		var prev string
		if ks.value != "" && value != "" && ks.value != value {
			// A new value over one the quorum held: it changed hands without a release,
			// unless the release is still on its way from masters whose reports lag
			// (released below, while this event waits).
			ev.Kind, prev = ChangedHands, ks.value
		}
		ks.value = value
		// A force-expire announced before this acquisition was not of its release
		// (it deleted a copy no quorum held, or its release was printed already).
		ks.forced = false
		m.enqueue(&pendingEvent{ev: ev, r: r, prev: prev}, len(m.pending), at)
		return
	case Released, Expired:
		ev.Value = value
		if ev.Value == "" {
			ev.Value = ks.value
		}
		if kind == Released && ks.forced && at.Sub(ks.forcedAt) <= m.window {
			ev.Kind = ForceExpired
		}
		if value == ks.value || value == "" {
			ks.value = ""
			ks.forced = false
		}
	default:
		ev.Value = value
		if ev.Value == "" {
			ev.Value = ks.value
		}
	}
	at0 := len(m.pending)
	if kind == Released || kind == Expired {
		// The release of the value a waiting change of hands replaced: the masters
		// whose reports lagged told it. It comes first, and the other is an
		// acquisition.
		for i, p := range m.pending {
			if p.prev != "" && p.prev == ev.Value && p.ev.Name == ks.name {
				p.ev.Kind, p.prev, at0 = Acquired, "", i
				break
			}
		}
	}
	m.enqueue(&pendingEvent{ev: ev, r: r}, at0, at)
}

// enqueue describes p's event and places it at index i of the pending events, to
// be emitted once every master reported or the grace passed.
func (m *Merger) enqueue(p *pendingEvent, i int, at time.Time) {
	describe(&p.ev)
	p.deadline = at.Add(m.Grace)
	if len(p.r.masters) >= m.masters && p.prev == "" {
		// Every master reported (a change of hands waits anyway: a master's report
		// of the release may lag its report of the set).
		p.deadline = at
	}
	p.r.ev = p
	m.pending = slices.Insert(m.pending, i, p)
}

// Flush returns the events complete by now: every master reported, or the grace
// passed. An event ready before an earlier one of the same name releases the
// earlier one too, so a name's events keep the order of their quorums; an event
// waiting its grace holds back only its name's later events. It also drops the
// state that expired by now: call it periodically (the CLI does every 50 ms).
func (m *Merger) Flush(now time.Time) []Event {
	m.expire(now)
	var lastReady map[string]int // per name, the last pending event that is ready
	for i, p := range m.pending {
		if !now.Before(p.deadline) {
			if lastReady == nil {
				lastReady = map[string]int{}
			}
			lastReady[p.ev.Name] = i
		}
	}
	if lastReady == nil {
		return nil
	}
	var out []Event
	kept := make([]*pendingEvent, 0, len(m.pending))
	for i, p := range m.pending {
		if j, ok := lastReady[p.ev.Name]; !ok || i > j {
			kept = append(kept, p)
			continue
		}
		p.done = true
		if p.prev != "" {
			if ks := m.keys[p.ev.Name]; ks != nil {
				ks.end(p.prev, now)
			}
		}
		out = append(out, p.ev)
	}
	m.pending = kept
	return out
}

// expire drops the reports older than the window (forgetting the names left with
// nothing) and the names idle for Idle.
func (m *Merger) expire(now time.Time) {
	for len(m.due) > 0 && now.Sub(m.due[0].at) > m.window {
		ks := m.due[0].ks
		m.due[0] = due{}
		m.due = m.due[1:]
		if m.keys[ks.name] != ks {
			continue
		}
		for k, r := range ks.reports {
			if now.Sub(r.first) > m.window && (r.ev == nil || r.ev.done) {
				delete(ks.reports, k)
			}
		}
		for v, at := range ks.ended {
			if now.Sub(at) > m.window {
				delete(ks.ended, v)
			}
		}
		if len(ks.reports) == 0 {
			ks.reports = nil
		}
		m.forgetIfIdle(ks)
	}
	for e := m.lru.Back(); e != nil && m.Idle > 0; e = m.lru.Back() {
		ks := e.Value.(*keyState)
		if now.Sub(ks.last) <= m.Idle || ks.waiting() {
			break
		}
		m.forget(ks)
	}
}

// before reports whether a master of r, a report of sets, reported its set before
// the set of the value reported held now (ks.value): r's cycle came first (each
// master's reports come in order).
func (ks *keyState) before(r *report) bool {
	cur := ks.reports[reportKey{Acquired, ks.value}]
	for i, x := range r.masters {
		if h, ok := ks.held[x]; ok && h.value == ks.value {
			return true
		}
		if cur == nil {
			continue
		}
		for j, y := range cur.masters {
			if y == x && cur.at[j].After(r.at[i]) {
				return true
			}
		}
	}
	return false
}

// replacing reports whether a change of hands of name waits for the release of
// value, the value it replaces.
func (m *Merger) replacing(name, value string) bool {
	for _, p := range m.pending {
		if p.prev == value && p.ev.Name == name {
			return true
		}
	}
	return false
}

// end records that value's acquisition ended (or was left out) at at.
func (ks *keyState) end(value string, at time.Time) {
	if ks.ended == nil {
		ks.ended = map[string]time.Time{}
	}
	ks.ended[value] = at
}

// waiting reports whether an event of the name has not been emitted yet.
func (ks *keyState) waiting() bool {
	for _, r := range ks.reports {
		if r.ev != nil && !r.ev.done {
			return true
		}
	}
	return false
}

// forgetIfIdle forgets a name no master holds and without reports.
func (m *Merger) forgetIfIdle(ks *keyState) {
	if len(ks.held) == 0 && len(ks.reports) == 0 && !ks.forced {
		m.forget(ks)
	}
}

func (m *Merger) forget(ks *keyState) {
	if m.keys[ks.name] != ks {
		return
	}
	m.lru.Remove(ks.elem)
	delete(m.keys, ks.name)
}
