package tui

import (
	"context"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// tickMsg is the app-level frame tick: it redraws countdowns and schedules polls.
type tickMsg struct{}

// snapshotMsg is the answer to poll request id, prepared off the UI goroutine.
// Answers to older requests are dropped.
type snapshotMsg struct {
	id   int
	prep *prepared
}

// poller owns the console's observation of the cluster: it issues polls (one in
// flight at a time; a hung one is abandoned after pollTimeout), drops stale
// answers, and keeps the last snapshot with its countdown spans, the lock events
// seen and the masters' recent latencies.
type poller struct {
	src      Source
	interval time.Duration

	id       int // of the latest request; answers to older ones are stale
	at, next time.Time
	inflight bool

	polled  bool                 // an answer was applied
	snap    Snapshot             // as the source gave it
	set     *lockSet             // its locks, indexed (nil before the first answer)
	gen     int                  // incremented by every applied snapshot
	history []historyEntry       // recent lock events, newest last
	latHist map[string][]float64 // each master's recent PING latencies, ms
}

func newPoller(src Source, interval time.Duration) poller {
	return poller{src: src, interval: interval, latHist: map[string][]float64{}}
}

// start issues a new poll request at now; any answer still in flight becomes
// stale. The command polls the source for the rows visible, then prepares the
// answer for the rows' key k (sorting, countdown spans, events, the rows for the
// sort and filter in force) so that applying it costs the UI goroutine almost
// nothing at 100,000 locks.
func (p *poller) start(now time.Time, k listKey, visible []string) tea.Cmd {
	if p.src == nil {
		return nil
	}
	p.id++
	id := p.id
	p.inflight = true
	p.at, p.next = now, now.Add(p.interval)
	src, timeout := p.src, p.timeout()
	// Everything the command reads is copied or immutable: a lockSet is replaced
	// by every poll, never changed in place.
	base := p.base(k)
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		return snapshotMsg{id: id, prep: base.prepare(src.Poll(ctx, visible))}
	}
}

// base is what preparing the next answer needs from the current one.
func (p *poller) base(k listKey) prepBase {
	return prepBase{prev: p.set, first: !p.polled, key: k}
}

// timeout bounds one poll: a hung poll is abandoned (its answer will be stale)
// and a new one issued.
func (p *poller) timeout() time.Duration { return max(3*p.interval, 2*time.Second) }

// due reports whether a tick at now should issue a poll.
func (p *poller) due(now time.Time) bool {
	if p.src == nil || now.Before(p.next) {
		return false
	}
	return !p.inflight || now.Sub(p.at) > p.timeout()
}

// apply takes a poll answer and reports whether it was the latest; a stale one is
// dropped but for its events, which the source handed out once.
func (p *poller) apply(msg snapshotMsg) bool {
	if msg.id != p.id {
		// Differences the console computes itself are recomputed by the next answer.
		if msg.prep.snap.EventSource != "" {
			p.history = appendHistory(p.history, msg.prep.events)
		}
		return false
	}
	p.inflight = false
	p.snap, p.set = msg.prep.snap, msg.prep.set
	p.gen++
	p.polled = true
	p.history = appendHistory(p.history, msg.prep.events)
	for _, n := range p.snap.Nodes {
		if !n.Reachable {
			continue
		}
		h := append(p.latHist[n.Master], float64(n.Latency.Microseconds())/1000)
		if len(h) > latencyMax {
			h = h[len(h)-latencyMax:]
		}
		p.latHist[n.Master] = h
	}
	return true
}
