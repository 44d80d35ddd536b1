package events

// How a quorum of masters' reports about one value becomes an event, and the
// order in which events wait for their grace.

import (
	"slices"
	"time"
)

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
