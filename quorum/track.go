package quorum

import (
	"context"
	"errors"
	"sync"
	"time"
)

// The loss watch (WithLossWatch, watch.go). One tracker per master holds a
// tracking connection (track_conn.go) and reads every watched key on it: the
// read both tells whether the master still holds the lock's value and arms the
// master's tracking of the key, so the next change of it (DEL, SET, an expiry
// or PEXPIRE, an eviction, FLUSHALL or FLUSHDB) pushes an invalidation on the
// same connection, and the tracker reads the key again. A read that shows a
// master no longer holding a value it held (or, at the first read, a master
// that voted for the lock) is a hint: the lock is verified with one read per
// master (Lock.Verify), which alone decides a loss. A broken connection (a
// master restarted) is dialled again and every key read again. A master that
// refuses tracking is read again every trackPoll.
//
// Hints are coalesced: a lock has at most one verification running and one
// pending, however many hints arrive, and a tracker has one batch of reads in
// flight, the keys invalidated meanwhile making its next batch.

// trackPoll is how often a master that refuses CLIENT TRACKING (an old server,
// an ACL, an emulation) has its watched keys read again.
const trackPoll = time.Second

// trackBatch bounds the reads of one batch of a tracker.
const trackBatch = 1024

// trackVerifiers is how many verifications of the loss watch run at once.
const trackVerifiers = 4

// lossWatch is one watched lock.
type lossWatch struct {
	l      *Lock
	keys   []string
	member bool // a shared holder: ZSCORE key value, else GET key = value

	mu sync.Mutex
	st []uint8 // per master and key: stUnknown, stHeld, stGone

	// owned by lossWatcher.mu
	queued, running, again, gone bool
}

const (
	stUnknown uint8 = iota
	stHeld
	stGone
)

// lossWatcher is the Manager's loss watch: its trackers and verifiers.
type lossWatcher struct {
	m        *Manager
	ctx      context.Context
	cancel   context.CancelFunc
	trackers []*tracker
	wg       sync.WaitGroup

	mu    sync.Mutex
	queue []*lossWatch
	ready chan struct{} // capacity 1: the queue is not empty
}

// losses returns the Manager's loss watcher, started on first use; nil after
// Close.
func (m *Manager) losses() *lossWatcher {
	m.wakeMu.Lock()
	defer m.wakeMu.Unlock()
	if m.wakeClosed {
		return nil
	}
	if m.loss == nil {
		w := &lossWatcher{m: m, ready: make(chan struct{}, 1)}
		w.ctx, w.cancel = context.WithCancel(context.Background())
		for i, n := range m.nodes {
			t := &tracker{w: w, n: n, idx: i, keys: map[string][]*lossWatch{}, dirty: map[string]struct{}{}, later: map[string]struct{}{}, churn: map[string]int{}, slow: map[string]struct{}{}, kick: make(chan struct{}, 1)}
			w.trackers = append(w.trackers, t)
			w.wg.Go(t.run)
		}
		for range trackVerifiers {
			w.wg.Go(w.verifier)
		}
		m.loss = w
	}
	return m.loss
}

// closeLosses stops the loss watcher, if started, and waits for its goroutines.
// m.wakeClosed must already be set.
func (m *Manager) closeLosses() {
	m.wakeMu.Lock()
	w := m.loss
	m.wakeMu.Unlock()
	if w == nil {
		return
	}
	w.cancel()
	w.wg.Wait()
}

// add watches l until its context (made) ends.
func (w *lossWatcher) add(l *Lock, keys []string, member bool) {
	lw := &lossWatch{l: l, keys: keys, member: member, st: make([]uint8, len(keys)*len(w.trackers))}
	for _, t := range w.trackers {
		t.add(lw)
	}
	context.AfterFunc(l.ctx, func() {
		w.mu.Lock()
		lw.gone = true
		w.mu.Unlock()
		for _, t := range w.trackers {
			t.remove(lw)
		}
	})
}

// hint schedules a verification of lw: at once when none is running, after the
// running one otherwise; never two at a time, never more than one pending.
func (w *lossWatcher) hint(lw *lossWatch) {
	w.mu.Lock()
	switch {
	case lw.gone || lw.queued || w.ctx.Err() != nil:
	case lw.running:
		lw.again = true
	default:
		lw.queued = true
		w.queue = append(w.queue, lw)
	}
	w.mu.Unlock()
	select {
	case w.ready <- struct{}{}:
	default:
	}
}

// verifier runs the queued verifications.
func (w *lossWatcher) verifier() {
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-w.ready:
		}
		for {
			w.mu.Lock()
			if len(w.queue) == 0 {
				w.mu.Unlock()
				break
			}
			lw := w.queue[0]
			w.queue[0] = nil
			w.queue = w.queue[1:]
			lw.queued, lw.running = false, true
			if len(w.queue) > 0 {
				select {
				case w.ready <- struct{}{}:
				default:
				}
			}
			w.mu.Unlock()
			w.verify(lw)
		}
	}
}

// verify runs one verification of lw, then the one asked for meanwhile. A
// verification that could not decide (too few masters answered) is made again
// trackPoll later, and so on until one decides: the masters it lacked may have
// lost the value already, and once they answer again their reads show the
// watch nothing new.
func (w *lossWatcher) verify(lw *lossWatch) {
	for {
		lctx := lw.l.ctx
		undecided := false
		if lctx.Err() == nil {
			ctx, cancel := context.WithTimeout(lctx, 2*w.m.cfg.nodeTimeout)
			err := lw.l.Verify(ctx)
			cancel()
			undecided = err != nil && !errors.Is(err, ErrLost) && lctx.Err() == nil
		}
		w.mu.Lock()
		again := lw.again && !lw.gone && w.ctx.Err() == nil
		lw.again, lw.running = false, again
		w.mu.Unlock()
		if !again {
			if undecided {
				time.AfterFunc(trackPoll, func() { w.hint(lw) })
			}
			return
		}
	}
}

// observe records what master idx showed of lw's key k and hints a verification
// when it stopped holding it: it held it before, or it voted for the lock.
// steady reports that it held it before and still does.
func (w *lossWatcher) observe(lw *lossWatch, idx, k int, held bool) (steady bool) {
	now := stGone
	if held {
		now = stHeld
	}
	lw.mu.Lock()
	i := idx*len(lw.keys) + k
	was := lw.st[i]
	lw.st[i] = now
	lw.mu.Unlock()
	if now == stGone && (was == stHeld || was == stUnknown && lw.voted(idx)) {
		w.hint(lw)
	}
	return was == stHeld && now == stHeld
}

// voted reports whether master idx voted for the lock's acquisition.
func (lw *lossWatch) voted(idx int) bool {
	v := lw.l.votes.Nodes
	return idx < len(v) && v[idx].Outcome == OutcomeOK
}
