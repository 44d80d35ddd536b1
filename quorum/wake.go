package quorum

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Wake-ups. A release PUBLISHes on the lock's wake channel on every master where it
// deleted the key and somebody waits (release.lua: a fair waiter's place or another
// waiter's marker in the queue key, waitmark.go), so a waiter need not sleep out its
// retry delay. One
// subscription per Manager and master, started when the first waiter appears and
// closed by Close, is shared by every waiter of the Manager; the channels it listens
// to follow the names being waited for. A wake-up is a hint: the retry delay stays
// the fallback, so a lost message (a master down) costs one delay, never
// correctness; a message published before the master confirmed the subscription is
// made up for by a round after the confirmation (confirm). A release of a fair lock
// wakes only the head of its queue (wake_target.go), and a channel only fair waiters
// wait on is listened to on fewer masters (wake_narrow.go).

// wakeLinger is how long a channel stays subscribed after its last waiter left, so
// that a client taking the same lock again and again does not resubscribe each time.
const wakeLinger = 30 * time.Second

// wakeChannel returns the pub/sub channel of a lock key.
func wakeChannel(key string) string { return key + ":wake" }

// waiter is one blocked acquisition waiting for a wake-up of its channel.
type waiter struct {
	id    string        // the fair waiter's id; "" wakes on every message
	ch    chan struct{} // capacity 1: a pending wake-up
	ready chan struct{} // closed once a master confirmed the subscription
	mu    sync.Mutex
	last  time.Time // when the last wake-up arrived
}

// wokenAfter reports whether a wake-up arrived after t (a wake-up older than the
// round that just failed tells nothing new).
func (w *waiter) wokenAfter(t time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last.After(t)
}

func (w *waiter) wake(at time.Time) {
	w.mu.Lock()
	w.last = at
	w.mu.Unlock()
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

// wakeHub dispatches wake-up messages from every master to the waiters.
type wakeHub struct {
	m      *Manager
	ctx    context.Context
	cancel context.CancelFunc
	subs   []*nodeSub
	loops  sync.WaitGroup // the reconcile loops

	mu        sync.Mutex
	waiters   map[string]map[*waiter]struct{} // by channel
	idle      map[string]time.Time            // channels without waiters, since when
	confirmed map[string]map[*nodeSub]bool    // masters that confirmed a channel's subscription
	wide      map[string]bool                 // channels listened to on every master (wake_narrow.go)
	closed    bool
}

// nodeSub is the subscription on one master. Its reconcile loop makes the set of
// subscribed channels follow the hub's, in order, without blocking waiters.
type nodeSub struct {
	n      *node
	ps     *redis.PubSub
	kick   chan struct{}
	active map[string]bool // owned by the reconcile loop
	done   chan struct{}
	failed atomic.Bool // its connection broke and has not answered since (wake_narrow.go)
}

// hub returns the Manager's wake hub, starting it on first use; nil after Close.
func (m *Manager) hub() *wakeHub {
	m.wakeMu.Lock()
	defer m.wakeMu.Unlock()
	if m.wakeClosed {
		return nil
	}
	if m.wake == nil {
		h := &wakeHub{m: m, waiters: map[string]map[*waiter]struct{}{}, idle: map[string]time.Time{},
			confirmed: map[string]map[*nodeSub]bool{}, wide: map[string]bool{}}
		h.ctx, h.cancel = context.WithCancel(context.Background())
		for _, n := range m.nodes {
			s := &nodeSub{n: n, ps: n.client.Subscribe(h.ctx), kick: make(chan struct{}, 1), active: map[string]bool{}, done: make(chan struct{})}
			h.subs = append(h.subs, s)
		}
		// Started once h.subs is whole: they read it (wake_narrow.go).
		for _, s := range h.subs {
			go h.receive(s)
			h.loops.Go(func() { h.reconcile(s) })
		}
		m.wake = h
	}
	return m.wake
}

// closeWake stops the hub, if it was started, and waits for its goroutines.
func (m *Manager) closeWake() {
	m.wakeMu.Lock()
	h := m.wake
	m.wakeClosed = true
	m.wakeMu.Unlock()
	if h == nil {
		return
	}
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	h.cancel()
	h.loops.Wait() // before the subscriptions close: a loop may be writing on one
	for _, s := range h.subs {
		_ = s.ps.Close()
		<-s.done
	}
}

// register adds a waiter for key's wake-ups; id is a fair waiter's id (it then
// sleeps through the wake-ups that name other waiters), "" for any other. The
// returned function removes it. w.ready is closed once some master has confirmed the
// subscription: a release on that master after that moment wakes w. Each master's
// confirmation wakes w too (confirm), so a release on a master that subscribed only
// after w's round there is followed by another round.
func (h *wakeHub) register(key, id string) (*waiter, func()) {
	chs := []string{wakeChannel(key), anyWakeChannel(key)}
	if id != "" {
		chs[1] = ownWakeChannel(key, h.m.wakeTag)
	}
	w := &waiter{id: id, ch: make(chan struct{}, 1), ready: make(chan struct{})}
	h.mu.Lock()
	if len(h.confirmed[chs[0]]) > 0 {
		close(w.ready)
	}
	// The reconcile loops need a kick only when a channel becomes wanted: one
	// already waited for, or lingering, is subscribed or on its way (a name taken
	// again and again costs no wake-up of five loops per acquisition).
	kick := false
	for _, ch := range chs {
		set := h.waiters[ch]
		if set == nil {
			if _, lingering := h.idle[ch]; !lingering {
				kick = true
			}
			set = map[*waiter]struct{}{}
			h.waiters[ch] = set
		}
		set[w] = struct{}{}
		delete(h.idle, ch)
		if id == "" && !h.wide[ch] {
			// A waiter that wakes on every message listens on every master.
			h.wide[ch] = true
			kick = true
		}
	}
	h.mu.Unlock()
	if kick {
		h.kickAll()
	}
	return w, func() {
		h.mu.Lock()
		for _, ch := range chs {
			set := h.waiters[ch]
			delete(set, w)
			switch {
			case set != nil && len(set) == 0:
				// Lingering, it keeps where it was listened to.
				delete(h.waiters, ch)
				h.idle[ch] = time.Now()
			case id == "" && h.wide[ch]:
				h.wide[ch] = anyWakesOnAll(set)
			}
		}
		h.mu.Unlock()
	}
}

// registerIfSubscribed registers a waiter for key only when key's channel is
// already subscribed (a name this Manager waited for recently), so that a blocking
// acquisition of a contended name listens from before its first round; nil otherwise.
func (h *wakeHub) registerIfSubscribed(key, id string) (*waiter, func()) {
	h.mu.Lock()
	ok := len(h.confirmed[wakeChannel(key)]) > 0
	h.mu.Unlock()
	if !ok {
		return nil, nil
	}
	return h.register(key, id)
}

// runningHub returns the wake hub if a waiter already started it, else nil.
func (m *Manager) runningHub() *wakeHub {
	m.wakeMu.Lock()
	defer m.wakeMu.Unlock()
	if m.wakeClosed {
		return nil
	}
	return m.wake
}

func (h *wakeHub) kickAll() {
	for _, s := range h.subs {
		select {
		case s.kick <- struct{}{}:
		default:
		}
	}
}

// wanted returns the channels that s should be subscribed to now: every wanted
// channel when s is one of the narrow masters (wake_narrow.go), else the wide ones;
// it drops the channels idle for longer than wakeLinger.
func (h *wakeHub) wanted(now time.Time, s *nodeSub) map[string]bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	narrow := h.narrowSubs()[s]
	out := make(map[string]bool, len(h.waiters)+len(h.idle))
	for ch := range h.waiters {
		if narrow || h.wide[ch] {
			out[ch] = true
		}
	}
	for ch, since := range h.idle {
		if now.Sub(since) > wakeLinger {
			delete(h.idle, ch)
			delete(h.wide, ch)
			continue
		}
		if narrow || h.wide[ch] {
			out[ch] = true
		}
	}
	return out
}

// reconcile subscribes and unsubscribes s's channels to follow the hub's.
func (h *wakeHub) reconcile(s *nodeSub) {
	tick := time.NewTicker(wakeLinger / 2)
	defer tick.Stop()
	for {
		select {
		case <-h.ctx.Done():
			return
		case <-s.kick:
		case <-tick.C:
		}
		want := h.wanted(time.Now(), s)
		var add, drop []string
		for ch := range want {
			if !s.active[ch] {
				add = append(add, ch)
			}
		}
		for ch := range s.active {
			if !want[ch] {
				drop = append(drop, ch)
			}
		}
		// go-redis remembers the channels even when the write fails and subscribes
		// them again on reconnect, so a master that is down now catches up later.
		if len(add) > 0 {
			ctx, cancel := context.WithTimeout(h.ctx, h.m.cfg.nodeTimeout)
			_ = s.ps.Subscribe(ctx, add...)
			cancel()
			for _, ch := range add {
				s.active[ch] = true
			}
		}
		if len(drop) > 0 {
			ctx, cancel := context.WithTimeout(h.ctx, h.m.cfg.nodeTimeout)
			_ = s.ps.Unsubscribe(ctx, drop...)
			cancel()
			for _, ch := range drop {
				delete(s.active, ch)
			}
		}
	}
}

// receive reads s's messages and wakes the waiters of their channel.
func (h *wakeHub) receive(s *nodeSub) {
	defer close(s.done)
	backoff := h.m.cfg.nodeTimeout
	for {
		msg, err := s.ps.Receive(h.ctx)
		if h.ctx.Err() != nil {
			return
		}
		if err != nil {
			// The master is down or the connection broke; go-redis reconnects and
			// resubscribes on the next Receive, and the master confirms each channel
			// again then. Until it does, none of its channels counts as subscribed.
			h.forget(s)
			t := time.NewTimer(backoff)
			select {
			case <-h.ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			backoff = min(2*backoff, time.Second)
			// Dial again now, and hear the master answer even where it listens
			// to no channel (it is then a candidate to listen again).
			_ = s.ps.Ping(h.ctx)
			continue
		}
		backoff = h.m.cfg.nodeTimeout
		if s.failed.Load() {
			h.answered(s)
		}
		switch msg := msg.(type) {
		case *redis.Message:
			at := time.Now()
			woke := h.notify(msg.Channel, msg.Payload, at)
			if tracing {
				traceWake(slices.Index(h.subs, s), msg.Channel, msg.Payload, woke, at)
			}
		case *redis.Subscription:
			h.confirm(s, msg)
		}
	}
}

// notify wakes the waiters of ch that payload concerns: every one, or, when it
// names fair waiters, those and the waiters that are not fair ones.
// It returns how many waiters it woke.
func (h *wakeHub) notify(ch, payload string, at time.Time) int {
	names, targeted := wakeNames(payload)
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for w := range h.waiters[ch] {
		if !targeted || w.id == "" || named(names, w.id) {
			w.wake(at)
			n++
		}
	}
	return n
}

// confirm records a master's (un)subscription of a channel and tells the waiters
// that were waiting for their subscription to be in place. A subscription also
// wakes every waiter of the channel: a release on that master after the waiter's
// last round there, but before the master subscribed, published to nobody (the
// waiter's round marked there, so the release published), and only a round after
// this moment learns of it. A waiter whose last round started after the
// confirmation ignores it (waiter.wokenAfter), so this costs a round only to the
// waiters that were waiting when a master (re)subscribed: at the first waiter of a
// channel, whose marking round runs once one master confirmed (subscribed), the
// others' confirmations may come after it; and after a master's connection broke.
// The Manager's own channel is the exception: a release publishes there only where
// it is listened to, and on the lock's channel elsewhere (wake_target.go).
func (h *wakeHub) confirm(s *nodeSub, sub *redis.Subscription) {
	at := time.Now()
	own := strings.HasSuffix(sub.Channel, ":wake:"+h.m.wakeTag)
	h.mu.Lock()
	defer h.mu.Unlock()
	set := h.confirmed[sub.Channel]
	switch sub.Kind {
	case "subscribe":
		if set == nil {
			set = map[*nodeSub]bool{}
			h.confirmed[sub.Channel] = set
		}
		set[s] = true
		for w := range h.waiters[sub.Channel] {
			select {
			case <-w.ready:
			default:
				close(w.ready)
			}
			if !own {
				w.wake(at)
			}
		}
	case "unsubscribe":
		delete(set, s)
		if len(set) == 0 {
			delete(h.confirmed, sub.Channel)
		}
	}
}

// forget drops every confirmation of s's master: its connection broke, so it
// listens to nothing until it confirms again, and a channel dropped meanwhile (whose
// unsubscription it will never confirm) must not stay behind. Narrow channels move
// to another master meanwhile (wake_narrow.go).
func (h *wakeHub) forget(s *nodeSub) {
	h.mu.Lock()
	for ch, set := range h.confirmed {
		delete(set, s)
		if len(set) == 0 {
			delete(h.confirmed, ch)
		}
	}
	wasNarrow := h.narrowSubs()[s]
	moved := !s.failed.Swap(true) && wasNarrow
	h.mu.Unlock()
	if moved {
		h.kickAll()
	}
}
