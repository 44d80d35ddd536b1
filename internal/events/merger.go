package events

import (
	"container/list"
	"time"

	"github.com/redlock/redlock/admin"
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
	if op == admin.ForceExpiredMessage {
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
	if kind == Acquired && admin.IsTombstone(value) {
		kind = Revoked
	}
	ks := m.state(name, at)
	h, holds := ks.held[master]
	switch kind {
	case Revoked:
		// The tombstone replaces the holder's value (SET over it): the event is
		// the revoked holder's; the expire of the set itself follows.
		ks.held[master] = holding{value: value, afterSet: true}
		value = h.value
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
