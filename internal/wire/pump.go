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

// gather lets the batch grow while commands are still arriving: it yields the
// processor (the rounds that the last batch's replies woke submit their next
// commands) and looks at the queue again, until a yield brings nothing new. At low
// load it costs one yield, and never a sleep. Called by the pump with mu held;
// it releases mu while it yields.
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
			return
		}
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
