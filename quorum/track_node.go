package quorum

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redlock/redlock/internal/wire"
)

// tracker is the loss watch of one master (track.go): the keys watched there,
// those to read again, and the goroutine that owns the tracking connection.
type tracker struct {
	w   *lossWatcher
	n   *node
	idx int

	mu      sync.Mutex              // never held across I/O
	keys    map[string][]*lossWatch // the watched keys and their locks
	dirty   map[string]struct{}     // keys to read again
	all     bool                    // read every key again
	later   map[string]struct{}     // keys whose read was refused: read again at the next tick
	churn   map[string]int          // per key, reads since the last tick that found it held as before
	churned int                     // such reads since the last tick, all keys
	slow    map[string]struct{}     // churning keys put off: read again trackSlow after the first
	slowAt  bool                    // a read of the slow keys is due
	long    int                     // how many watched keys are longer than trackValueCap
	flushAt time.Time               // when the last flush pushed was read at once (flushed)
	flushIn bool                    // a read of every key after a flush pushed is put off
	kick    chan struct{}           // capacity 1: something to read
	// tracking: the connection is up and the master tracks its reads.
	tracking atomic.Bool
}

// add watches lw's keys on t's master and reads them.
func (t *tracker) add(lw *lossWatch) {
	t.mu.Lock()
	for _, k := range lw.keys {
		if len(t.keys[k]) == 0 && len(k) > trackValueCap {
			t.long++
		}
		t.keys[k] = append(t.keys[k], lw)
		t.dirty[k] = struct{}{}
	}
	t.mu.Unlock()
	t.poke()
}

// remove stops watching lw on t's master. The master keeps tracking its keys
// until their next change (the release's DEL), which the tracker then ignores.
func (t *tracker) remove(lw *lossWatch) {
	t.mu.Lock()
	for _, k := range lw.keys {
		ws := t.keys[k]
		for i, x := range ws {
			if x == lw {
				ws = append(ws[:i], ws[i+1:]...)
				break
			}
		}
		if len(ws) == 0 {
			if _, ok := t.keys[k]; ok && len(k) > trackValueCap {
				t.long--
			}
			delete(t.keys, k)
			delete(t.dirty, k)
		} else {
			t.keys[k] = ws
		}
	}
	t.mu.Unlock()
}

func (t *tracker) poke() {
	select {
	case t.kick <- struct{}{}:
	default:
	}
}

// invalidate marks the keys inv names to be read again.
func (t *tracker) invalidate(inv invalidated) {
	t.mu.Lock()
	if inv.all {
		t.all = true
	}
	for _, k := range inv.keys {
		if _, ok := t.keys[k]; ok {
			t.reread(k)
		}
	}
	if inv.long && !inv.all && t.long > 0 { // without long keys watched, a hostile push costs nothing
		for k := range t.keys {
			if len(k) > trackValueCap {
				t.reread(k)
			}
		}
	}
	t.mu.Unlock()
	t.poke()
}

// retry marks the keys whose last read was refused to be read again, and
// starts counting the churn afresh.
func (t *tracker) retry() {
	t.mu.Lock()
	clear(t.churn)
	t.churned = 0
	n := len(t.later)
	for k := range t.later {
		if _, ok := t.keys[k]; ok {
			t.dirty[k] = struct{}{}
		}
	}
	clear(t.later)
	t.mu.Unlock()
	if n > 0 {
		t.poke()
	}
}

// read is one read of a batch: a key and the locks it tells about.
type read struct {
	key string
	lws []*lossWatch
	lw  *lossWatch // a shared holder's ZSCORE: this lock only
}

// take returns the next batch of reads (at most trackBatch keys).
func (t *tracker) take() []read {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.all {
		t.all = false
		for k := range t.keys {
			t.dirty[k] = struct{}{}
		}
	}
	var out []read
	for k := range t.dirty {
		if len(out) >= trackBatch {
			t.poke() // the rest next batch
			break
		}
		delete(t.dirty, k)
		var plain []*lossWatch
		for _, lw := range t.keys[k] {
			if lw.member {
				out = append(out, read{key: k, lw: lw})
			} else {
				plain = append(plain, lw)
			}
		}
		if len(plain) > 0 {
			out = append(out, read{key: k, lws: plain})
		}
	}
	return out
}

// trackRetry and trackRetryMax: a broken tracking connection is dialled again
// after trackRetry, then after twice as long each time up to trackRetryMax, so
// that a master restarted is read again within trackRetryMax of answering.
const (
	trackRetry    = 10 * time.Millisecond
	trackRetryMax = 200 * time.Millisecond
)

// run keeps t's connection and serves it until the watcher stops.
func (t *tracker) run() {
	ctx := t.w.ctx
	for retry := trackRetry; ctx.Err() == nil; retry = min(2*retry, trackRetryMax) {
		c, tracking, err := dialTracker(ctx, t.n, t.w.m.cfg.nodeTimeout)
		if err == nil {
			t.invalidate(invalidated{all: true}) // a new connection tracks nothing yet
			t.tracking.Store(tracking)
			err = t.serve(ctx, c, tracking)
			t.tracking.Store(false)
			if err != nil {
				retry = trackRetry // it answered: dial again at once
			}
			_ = c.wc.Close()
		}
		if err != nil && ctx.Err() == nil {
			tm := time.NewTimer(retry)
			select {
			case <-ctx.Done():
			case <-tm.C:
			}
			tm.Stop()
		}
	}
}

// serve reads t's keys on c whenever some are to be read (at once, after an
// invalidation, or every trackPoll without tracking) until c breaks.
func (t *tracker) serve(ctx context.Context, c *trackConn, tracking bool) error {
	replies := make(chan wire.Value, trackBatch)
	broken := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		for {
			v, err := c.wc.Value(trackValueCap)
			if err == nil && v.Type != '>' && c.asked.Add(-1) < 0 {
				// Nothing waits for it: every later reply would be taken
				// for the answer to the command before.
				err = fmt.Errorf("%s: %w", t.n.name, errTrackUnasked)
			}
			if err != nil {
				broken <- err
				return
			}
			if inv, ok := invalidation(v); ok && inv.all {
				t.flushed()
				continue
			} else if ok {
				t.invalidate(inv)
				continue
			}
			if v.Type == '>' {
				continue // another push: nothing the watch asked for
			}
			select {
			case replies <- v:
			case <-done:
				return
			}
		}
	}()
	defer func() { close(done); _ = c.wc.Close() }()
	// Every trackPoll: without tracking, read every key again; with it, ping
	// (EXISTS of a key held there), so that a connection silently gone (a
	// partition, a host lost) is dialled again, and every key read again,
	// within trackPoll + the node timeout, and so is a change that pushed no
	// invalidation (SWAPDB).
	tk := time.NewTicker(trackPoll)
	defer tk.Stop()
	poll := tk.C
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-broken:
			return err
		case <-poll:
			t.retry()
			if tracking {
				if err := t.ping(ctx, c, replies, broken); err != nil {
					return err
				}
				continue
			}
			t.invalidate(invalidated{all: true})
		case <-t.kick:
		}
		batch := t.take()
		if len(batch) == 0 {
			continue
		}
		for _, r := range batch {
			if r.lw != nil {
				c.out = wire.AppendCommand(c.out, "ZSCORE", r.key, r.lw.l.value)
			} else {
				c.out = wire.AppendCommand(c.out, "GET", r.key)
			}
		}
		if err := c.send(len(batch), time.Now().Add(t.w.m.cfg.nodeTimeout)); err != nil {
			return err
		}
		if err := t.answers(ctx, batch, replies, broken); err != nil {
			return err
		}
	}
}

// ping checks c every trackPoll, waiting for no longer than the node timeout:
// EXISTS of a watched key this master was last seen holding (PING when it holds
// none). An answer that it no longer exists, without the invalidation that
// should have said so (SWAPDB replaces every key and pushes nothing), means that
// tracking missed changes: every key is read again.
func (t *tracker) ping(ctx context.Context, c *trackConn, replies <-chan wire.Value, broken <-chan error) error {
	canary := t.canary()
	if canary == "" {
		c.out = wire.AppendCommand(c.out, "PING")
	} else {
		c.out = wire.AppendCommand(c.out, "EXISTS", canary)
	}
	if err := c.send(1, time.Now().Add(t.w.m.cfg.nodeTimeout)); err != nil {
		return err
	}
	tm := time.NewTimer(t.w.m.cfg.nodeTimeout)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case err := <-broken:
		return err
	case <-tm.C:
		return errors.New("no answer to PING within the node timeout")
	case v := <-replies:
		if canary != "" && v.Type == ':' && v.Str == "0" && t.heldHere(canary) {
			// Gone unannounced (or announced just now: then this costs a
			// read of every key, nothing else).
			t.invalidate(invalidated{all: true})
		}
		return nil
	}
}

// canary returns a watched key that this master was last seen holding, "" when
// the first few looked at are not.
func (t *tracker) canary() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for k, lws := range t.keys {
		if heldAt(lws, t.idx, k) {
			return k
		}
		if n++; n == 8 {
			break
		}
	}
	return ""
}

// heldHere reports whether this master was last seen holding k.
func (t *tracker) heldHere(k string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return heldAt(t.keys[k], t.idx, k)
}

// heldAt reports whether a lock watching k last saw k held on master idx.
func heldAt(lws []*lossWatch, idx int, k string) bool {
	for _, lw := range lws {
		lw.mu.Lock()
		held := false
		for i, x := range lw.keys {
			held = held || x == k && lw.st[idx*len(lw.keys)+i] == stHeld
		}
		lw.mu.Unlock()
		if held {
			return true
		}
	}
	return false
}

// answers reads a batch's replies and records what each shows.
func (t *tracker) answers(ctx context.Context, batch []read, replies <-chan wire.Value, broken <-chan error) error {
	tm := time.NewTimer(t.w.m.cfg.nodeTimeout + time.Duration(len(batch))*time.Millisecond)
	defer tm.Stop()
	for _, r := range batch {
		var v wire.Value
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-broken:
			return err
		case <-tm.C:
			return errors.New("no reply within the node timeout")
		case v = <-replies:
		}
		if v.Type == '-' && !wrongType(v.Str) {
			// Refused (an ACL, a master loading): nothing learnt, and the key
			// is not tracked: read it again at the next tick.
			t.mu.Lock()
			t.later[r.key] = struct{}{}
			t.mu.Unlock()
			continue
		}
		steady := false
		if r.lw != nil {
			steady = t.w.observeKey(r.lw, t.idx, r.key, v.Type != '-' && !v.Null)
		}
		for _, lw := range r.lws {
			steady = t.w.observeKey(lw, t.idx, r.key, v.Type != '-' && !v.Null && !v.Long && v.Str == lw.l.value) || steady
		}
		if steady {
			t.steady(r.key)
		}
	}
	return nil
}

func wrongType(s string) bool { return len(s) >= 9 && s[:9] == "WRONGTYPE" }

// observeKey is observe for the key named k; steady reports that k was held
// there before and still is.
func (w *lossWatcher) observeKey(lw *lossWatch, idx int, k string, held bool) (steady bool) {
	for i, x := range lw.keys {
		if x == k {
			steady = w.observe(lw, idx, i, held) || steady
		}
	}
	return steady
}
