package wire

import (
	"runtime"
	"time"
)

// pump is the pipe's driver goroutine: it reads the replies of the batch in
// flight, then writes what was queued meanwhile as the next batch, dialling first
// when there is no connection, until nothing is queued or in flight.
func (p *pipe) pump() {
	defer p.wg.Done()
	waited := false // gathered once since the last write
	p.mu.Lock()
	for {
		pc := p.conn
		switch {
		case p.closed:
			p.failQueued(ErrClosed)
			p.driving = false
			p.mu.Unlock()
			return
		case pc != nil && pc.inflight.len() > 0:
			p.mu.Unlock()
			p.readBatch(pc)
			p.mu.Lock()
		case len(p.queue) == 0:
			if p.depth > 1 && !waited {
				// Contended: the rounds just answered may be about to send more.
				waited = true
				p.gather()
				continue
			}
			p.driving = false
			p.mu.Unlock()
			return
		case pc == nil:
			p.connect()
		default:
			p.gather()
			if p.conn == pc {
				p.writeBatch(pc, nil)
				waited = false
			}
		}
	}
}

// gatherYields bounds how many times gather yields for one batch.
const gatherYields = 16

// The silence gap: how long gather waits for the next command of a wave that has
// not fully landed, an eighth of the master's last answer time within bounds; and
// lingerCap, how long it waits for one wave in all.
const (
	silenceFloor = 20 * time.Microsecond
	silenceCeil  = 200 * time.Microsecond
	lingerCap    = 2 * silenceCeil
)

// gather lets the batch grow while commands are still arriving: it yields the
// processor (the rounds that the last batch's replies woke submit their next
// commands) and looks at the queue again, until as many are queued as the last
// batch carried (the wave has landed) or a yield brings nothing new; then, short
// of the wave but with two commands or more (a lone command after a burst goes at
// once), it lingers for the rest. At low load (a last batch of one) it costs one
// yield, and never a wait. Called by the pump with mu held, nothing in flight; it
// releases mu while it yields and waits.
//
// Why wait: a Redlock round's next command to a master comes only when the
// round's other masters have answered too, so a wave lands over the time the
// slowest of them takes, and a batch written at the first lull carries a part
// of it; the master then reads (wakes up) for each part. go-redis's AutoPipeline
// waits for its waves the same way.
func (p *pipe) gather() {
	for range gatherYields {
		n := len(p.queue)
		if n >= p.depth && n > 0 {
			return // as many as the last batch: the wave has landed
		}
		p.mu.Unlock()
		runtime.Gosched()
		p.mu.Lock()
		if len(p.queue) == n || p.closed {
			break
		}
	}
	p.linger()
}

// linger waits, with mu released, for the commands still missing from the wave:
// it returns when the queue holds as many as the last batch, when a silence gap
// passes with nothing new, after lingerCap in all, or when the pipe closes.
// Deadlines are not looked at (a round's node timeout is milliseconds at least).
// Called with mu held, two commands or more queued.
//
// It also returns once the queue holds the tail of a burst (tail): the gap is a
// runtime timer, and when nothing else runs in the process the runtime sleeps to
// the millisecond, so a wait for a burst's last stragglers lasted a millisecond
// instead of the gap (TestBugStragglersAfterABurstWaitAMillisecond: a lone one
// goes at once, before the wait; two or three waited in half the trials). What it
// does not guarantee: stragglers as many as half the last batch or more, with
// nothing else running, may still wait about a millisecond. Yielding in a loop
// instead of the timer keeps to the gap, but on two processors it took the
// processor from the rounds that make up the wave: at five masters its batches
// were barely deeper than without waiting, for 15-25 % more processor time per
// round.
func (p *pipe) linger() {
	if p.depth <= 1 || len(p.queue) < 2 || len(p.queue) >= p.depth || p.closed {
		return
	}
	select {
	case <-p.arrived: // a token left by a wake that came as the last linger ended
	default:
	}
	gap := min(max(time.Duration(p.lastTook.Load())/8, silenceFloor), silenceCeil)
	end := time.Now().Add(lingerCap)
	if p.silence == nil {
		p.silence = time.NewTimer(gap)
	} else {
		p.silence.Reset(gap)
	}
	defer p.silence.Stop()
	for len(p.queue) < p.depth && !p.closed {
		// Set before the rounds are counted: a round that ends after the count
		// finds the pump awaiting and wakes it (roundEnded).
		p.awaiting.Store(true)
		if p.tail() {
			p.awaiting.Store(false)
			return
		}
		p.mu.Unlock()
		select {
		case <-p.arrived:
		case <-p.silence.C:
			p.mu.Lock()
			p.awaiting.Store(false)
			return
		}
		p.mu.Lock()
		p.awaiting.Store(false)
		left := time.Until(end)
		if left <= 0 {
			return
		}
		p.silence.Reset(min(gap, left))
	}
}

// tail reports whether the queue holds the tail of a burst: fewer than half the
// last batch's commands, one of every round still running, and still so after a
// yield. Rounds that ended are not waited for (a burst's last rounds, whose
// goroutines stopped, send nothing more); the yield lets a goroutine that just
// ended its round start its next one. At load, the few rounds between two of
// their own at any moment are not mistaken for a tail: the wave waits for them,
// as before. Called with mu held, nothing in flight; it releases mu while it
// yields.
func (p *pipe) tail() bool {
	n := len(p.queue)
	if !p.tailNow() {
		return false
	}
	p.mu.Unlock()
	runtime.Gosched()
	p.mu.Lock()
	return len(p.queue) == n && p.tailNow()
}

// tailNow is tail without the yield. Called with mu held.
func (p *pipe) tailNow() bool {
	n := len(p.queue)
	return 2*n < p.depth && int(p.ps.active.Load()) <= n
}

// roundEnded is called when a round that submitted its commands ends: a pump
// that waits for the rest of its wave waits no more once its queue holds the
// tail of a burst (tail).
func (ps *Pipes) roundEnded() {
	ps.active.Add(-1) // before awaiting is read: see linger
	for _, p := range ps.pipes {
		if !p.awaiting.Load() {
			continue
		}
		p.mu.Lock()
		if p.awaiting.Load() && p.tailNow() {
			p.wake()
		}
		p.mu.Unlock()
	}
}

// connect dials the master. Called with mu held; it releases mu while dialling.
// On failure the commands queued before the dial started fail with its error: a
// dead master costs one dial per batch, not one per command.
func (p *pipe) connect() {
	p.mu.Unlock()
	start := time.Now()
	wc, err := p.ps.dial(p.ps.life, p.i, start.Add(p.ps.cfg.Timeout))
	if err == nil {
		err = wc.c.SetDeadline(time.Time{})
	}
	p.mu.Lock()
	if err != nil || p.closed {
		if wc != nil {
			_ = wc.c.Close()
		}
		if p.closed {
			p.failQueued(ErrClosed) // the dial may have failed because Close ended it
			return
		}
		// Commands of rounds that started after this dial get a dial of their own:
		// the master may be back by now.
		p.failQueuedBefore(start, err)
		return
	}
	pc := &pipeConn{wc: wc, direct: directConn(wc.c)}
	pc.peeker.init(wc.c)
	pc.rpeek.init(wc.c)
	p.conn = pc
}
