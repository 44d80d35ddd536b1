package quorum

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// A pipe is one master's side of the wire fast path: a queue of commands waiting to
// be written, at most one connection, and whoever holds the writer's role. At low
// load the round that finds the pipe idle writes its own command; otherwise the
// pipe's writer goroutine writes everything queued in one write, dialling first when
// there is no connection. A reader goroutine per connection reads the replies.
//
// The lock (mu) is never held across network I/O: writes, reads and dials happen
// outside it. Setting a connection's read deadline (a timer, no I/O) happens under
// it, so that the deadline always follows the oldest command in flight.

// wireFresh is how recently a connection must have been written to for the idle
// check to be skipped (it costs a system call).
const wireFresh = 10 * time.Millisecond

// errClosed is the result of commands sent after, or in flight at, Manager.Close.
var errClosed = errors.New("manager closed")

// errNotSent is the result of a command still queued at its deadline (the master's
// connection was being dialled, or its writes were stalled).
var errNotSent = fmt.Errorf("not sent within the node timeout: %w", errNoReply)

type pipe struct {
	m *Manager
	n *node

	mu      sync.Mutex
	queue   []*wireReq // waiting to be written, in order
	spare   []*wireReq // the queue's other buffer
	conn    *pipeConn  // nil: dial before the next write
	writing bool       // someone is responsible for writing the queue out
	closed  bool
	started bool // the writer goroutine runs

	// Counters for tests: replies read for abandoned commands, connections dropped.
	drained, dropped atomic.Int64

	wbuf []byte        // the write buffer; used by the writer's role only
	kick chan struct{} // hands the writer's role to the goroutine
	stop chan struct{} // closed by close
	wg   sync.WaitGroup
}

// pipeConn is one connection of a pipe and the commands written on it whose reply
// has not been read, oldest first (under the pipe's lock).
type pipeConn struct {
	wc       *wireConn
	inflight reqRing
	headSent time.Time // the write time the read deadline was set from
	lastSent time.Time // the last write; the writer's role only
	dead     bool
	peeker   // the idle check (wire_unix.go); the writer's role only
}

func newPipe(m *Manager, n *node) *pipe {
	return &pipe{m: m, n: n, kick: make(chan struct{}, 1), stop: make(chan struct{})}
}

// submit queues r. The caller writes it at once when the pipe is idle and
// connected; otherwise whoever holds the writer's role will.
func (p *pipe) submit(r *wireReq) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.fail(r, errClosed)
		return
	}
	p.queue = append(p.queue, r)
	if p.writing {
		p.mu.Unlock()
		return
	}
	p.writing = true
	if pc := p.conn; pc != nil && pc.inflight.len() == 0 && len(p.queue) == 1 {
		// Idle: nothing in flight that a stalled write could be waiting behind.
		p.writeBatch(pc)
		if len(p.queue) == 0 {
			p.writing = false
			p.mu.Unlock()
			return
		}
	}
	p.handOff()
}

// handOff gives the writer's role to the writer goroutine. Called with mu held
// and writing set; it releases mu.
func (p *pipe) handOff() {
	if p.closed {
		p.failQueued(errClosed)
		p.writing = false
		p.mu.Unlock()
		return
	}
	if !p.started {
		p.started = true
		p.wg.Add(1)
		go p.writer()
	}
	p.mu.Unlock()
	select {
	case p.kick <- struct{}{}:
	default: // a kick is pending: the goroutine will look at the queue
	}
}

// writer is the pipe's writer goroutine: when kicked, it writes out the queue,
// dialling first when there is no connection, until the queue is empty.
func (p *pipe) writer() {
	defer p.wg.Done()
	for {
		select {
		case <-p.stop:
			return
		case <-p.kick:
		}
		p.mu.Lock()
		for p.writing && len(p.queue) > 0 {
			switch {
			case p.closed:
				p.failQueued(errClosed)
			case p.conn == nil:
				p.connect()
			default:
				p.writeBatch(p.conn)
			}
		}
		p.writing = false
		p.mu.Unlock()
	}
}

// connect dials the master. Called with mu held; it releases mu while dialling.
// On failure every queued command fails with the dial's error: a dead master
// costs one dial per batch, not one per command.
func (p *pipe) connect() {
	p.mu.Unlock()
	wc, err := p.m.dialWire(p.m.life, p.n, time.Now().Add(p.m.cfg.nodeTimeout))
	if err == nil {
		err = wc.c.SetDeadline(time.Time{})
	}
	p.mu.Lock()
	switch {
	case err == nil && p.closed:
		_ = wc.c.Close()
		err = errClosed
	case err != nil && wc != nil:
		_ = wc.c.Close()
	}
	if err != nil {
		p.failQueued(err)
		return
	}
	pc := &pipeConn{wc: wc, lastSent: time.Now()}
	pc.peeker.init(wc.c)
	p.conn = pc
	p.wg.Add(1)
	go p.read(pc)
}

// failQueued fails every queued command with err. Called with mu held.
func (p *pipe) failQueued(err error) {
	for _, r := range p.queue {
		p.fail(r, err)
	}
	clear(p.queue)
	p.queue = p.queue[:0]
}

// fail gives a queued command its result without writing it; an abandoned one is
// left alone.
func (p *pipe) fail(r *wireReq, err error) {
	if r.state.CompareAndSwap(reqQueued, reqDone) {
		r.rnd.finish(r, OutcomeError, "", err)
	}
}

// writeBatch writes every queued command to pc in one write. Called with mu held
// and the writer's role; it releases mu during the write (and the idle check) and
// holds it again on return; when pc turned out dead, the queue is left as it was. A command abandoned before it is written is dropped; one whose deadline
// passed fails unsent.
func (p *pipe) writeBatch(pc *pipeConn) {
	if pc.inflight.len() == 0 && time.Since(pc.lastSent) >= wireFresh {
		// A connection idle for a while may have been closed by the master (a
		// restart, its idle timeout, a reset) before the reader noticed: look
		// first, so that the batch goes out on a new connection rather than fail.
		p.mu.Unlock()
		err := pc.check()
		if err != nil {
			p.kill(pc, fmt.Errorf("closed while idle: %w", err))
		}
		p.mu.Lock()
		if pc.dead {
			return // the queue is left for the next connection
		}
	}
	batch := p.queue
	p.queue = p.spare[:0]
	buf := p.wbuf[:0]
	now := time.Now()
	wasIdle := pc.inflight.len() == 0
	for _, r := range batch {
		if !now.Before(r.rnd.deadline) {
			p.fail(r, errNotSent)
			continue
		}
		if !r.state.CompareAndSwap(reqQueued, reqWritten) {
			continue // abandoned
		}
		r.sent = now
		pc.lastSent = now
		pc.inflight.push(r)
		buf = r.rnd.appendTo(buf, r.eval, pc.wc.setGet)
	}
	// r may be finished, and its round reused, once written: no r is looked at
	// after this point.
	clear(batch)
	p.spare = batch[:0]
	if len(buf) == 0 {
		p.wbuf = buf
		return
	}
	timeout := p.m.cfg.nodeTimeout
	if wasIdle {
		pc.headSent = now
		_ = pc.wc.c.SetReadDeadline(now.Add(timeout))
	}
	p.mu.Unlock()
	_ = pc.wc.c.SetWriteDeadline(now.Add(timeout))
	_, err := pc.wc.c.Write(buf)
	p.wbuf = buf
	if err != nil {
		p.kill(pc, err)
	}
	p.mu.Lock()
}

// kill closes pc and fails every command in flight on it with err. The next
// command dials a new connection.
func (p *pipe) kill(pc *pipeConn, err error) {
	p.mu.Lock()
	if pc.dead {
		p.mu.Unlock()
		return
	}
	pc.dead = true
	if p.conn == pc {
		p.conn = nil
	}
	lost := pc.inflight.drain()
	p.mu.Unlock()
	p.dropped.Add(1)
	_ = pc.wc.c.Close()
	for _, r := range lost {
		if r.state.CompareAndSwap(reqWritten, reqDone) {
			r.rnd.finish(r, OutcomeError, "", err)
		}
	}
}

// read is a connection's reader goroutine: it reads each reply and gives it to the
// oldest command in flight. Any failure kills the connection; a read deadline
// (the oldest command's write time plus the node timeout) passing means the master
// is hung.
func (p *pipe) read(pc *pipeConn) {
	defer p.wg.Done()
	for {
		typ, line, err := pc.wc.readLine()
		if err != nil {
			if isTimeout(err) {
				err = errNoReply
			}
			p.kill(pc, err)
			return
		}
		p.mu.Lock()
		r := pc.inflight.pop()
		if p.m.cfg.mut.skipAbandoned && r != nil && r.state.Load() == reqAbandoned && pc.inflight.len() > 0 {
			r = pc.inflight.pop()
		}
		if h := pc.inflight.peek(); h == nil {
			pc.headSent = time.Time{}
			_ = pc.wc.c.SetReadDeadline(time.Time{})
		} else if !h.sent.Equal(pc.headSent) {
			pc.headSent = h.sent
			_ = pc.wc.c.SetReadDeadline(h.sent.Add(p.m.cfg.nodeTimeout))
		}
		p.mu.Unlock()
		if r == nil {
			p.kill(pc, fmt.Errorf("%w: a reply to no command", errProtocol))
			return
		}
		if err := p.deliver(pc, r, typ, line); err != nil {
			p.kill(pc, err)
			return
		}
	}
}

// deliver decodes r's reply and gives it to r's round, unless the round abandoned
// r. A NOSCRIPT reply queues r again, to be written with EVAL. An error means the
// connection is out of step and must be dropped (r has failed with it).
func (p *pipe) deliver(pc *pipeConn, r *wireReq, typ byte, line []byte) error {
	rd := r.rnd // never reused while r is written or abandoned
	if typ == '-' && rd.cmd != wireSet && !r.eval && hasPrefix(line, "NOSCRIPT") {
		if r.state.CompareAndSwap(reqWritten, reqQueued) {
			r.eval = true
			p.resubmit(r)
		} else {
			p.drained.Add(1)
		}
		return nil
	}
	out, holder, err := decodeReply(pc.wc, rd.cmd, typ, line)
	_, isReply := err.(replyError) // decodeReply returns it unwrapped
	fatal := err != nil && !isReply
	if r.state.CompareAndSwap(reqWritten, reqDone) {
		if fatal {
			err = fmt.Errorf("%w (connection dropped)", err)
		}
		rd.finish(r, out, holder, err)
	} else {
		p.drained.Add(1) // abandoned: the reply is read and thrown away
	}
	if fatal {
		return err
	}
	return nil
}

// resubmit queues r again (its EVAL after NOSCRIPT) from the reader goroutine,
// which must not write: the writer goroutine does.
func (p *pipe) resubmit(r *wireReq) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.fail(r, errClosed)
		return
	}
	p.queue = append(p.queue, r)
	if p.writing {
		p.mu.Unlock()
		return
	}
	p.writing = true
	p.handOff()
}

// close fails what is queued and in flight and stops the pipe's goroutines.
func (p *pipe) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	pc := p.conn
	if !p.writing {
		p.failQueued(errClosed)
	}
	p.mu.Unlock()
	if pc != nil {
		p.kill(pc, errClosed)
	}
	close(p.stop)
	p.wg.Wait()
	p.mu.Lock()
	p.failQueued(errClosed) // what the writer goroutine left when it stopped
	p.mu.Unlock()
}

func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}

// reqRing is a FIFO of commands.
type reqRing struct {
	buf  []*wireReq
	head int
	n    int
}

func (q *reqRing) len() int { return q.n }

func (q *reqRing) push(r *wireReq) {
	if q.n == len(q.buf) {
		grown := make([]*wireReq, max(8, 2*len(q.buf)))
		for i := range q.n {
			grown[i] = q.buf[(q.head+i)%len(q.buf)]
		}
		q.buf, q.head = grown, 0
	}
	q.buf[(q.head+q.n)%len(q.buf)] = r
	q.n++
}

func (q *reqRing) peek() *wireReq {
	if q.n == 0 {
		return nil
	}
	return q.buf[q.head]
}

func (q *reqRing) pop() *wireReq {
	if q.n == 0 {
		return nil
	}
	r := q.buf[q.head]
	q.buf[q.head] = nil
	q.head = (q.head + 1) % len(q.buf)
	q.n--
	return r
}

// drain empties the ring and returns its commands, oldest first.
func (q *reqRing) drain() []*wireReq {
	out := make([]*wireReq, 0, q.n)
	for q.n > 0 {
		out = append(out, q.pop())
	}
	return out
}
