package wire

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
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

// fresh is how recently a connection must have been written to for the idle
// check to be skipped (it costs a system call).
const fresh = 10 * time.Millisecond

// errNotSent is the result of a command still queued at its deadline (the master's
// connection was being dialled, or its writes were stalled).
var errNotSent = fmt.Errorf("not sent within the node timeout: %w", ErrNoReply)

type pipe struct {
	ps *Pipes
	i  int // the master's index

	mu      sync.Mutex
	queue   []*req    // waiting to be written, in order
	spare   []*req    // the queue's other buffer
	conn    *pipeConn // nil: dial before the next write
	writing bool      // someone is responsible for writing the queue out
	closed  bool
	started bool // the writer goroutine runs

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
	// reading: someone holds the reader's role (a reader goroutine, or a round
	// reading its own reply); true exactly while commands are in flight.
	reading bool
	// reserved: a round holds the reader's role but is not reading yet (it reads
	// its masters one after the other). A command written behind its own takes the
	// role over for a reader goroutine, so that the round, waiting on another
	// master, never holds up other rounds' replies.
	reserved bool
	lastSent time.Time // the last write; the writer's role only
	dead     bool
	direct   bool   // a TCP or Unix socket (under TLS or not): an idle write never blocks
	peeker          // the idle check (wire_unix.go); the writer's role only
	rpeek    peeker // the reader's look at a socket before it calls a master hung
}

func newPipe(ps *Pipes, i int) *pipe {
	return &pipe{ps: ps, i: i, kick: make(chan struct{}, 1), stop: make(chan struct{})}
}

// submit queues r. When the pipe is idle and connected the caller writes r at
// once and gets the connection back: it then holds the reader's role for it and
// must call readOwn. Otherwise whoever holds the writer's role writes r, and a
// reader goroutine reads its reply.
func (p *pipe) submit(r *req) *pipeConn {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.fail(r, ErrClosed)
		return nil
	}
	p.queue = append(p.queue, r)
	if p.writing {
		p.mu.Unlock()
		return nil
	}
	p.writing = true
	var own *pipeConn
	if pc := p.conn; pc != nil && pc.direct && pc.inflight.len() == 0 && len(p.queue) == 1 {
		// Idle: nothing in flight that a stalled write could be waiting behind.
		// Only on a socket: a custom Dialer's connection may block a write until
		// its peer reads (net.Pipe, a flow-controlled tunnel), and the round would
		// be stuck in it, with no reader to find the peer hung.
		if p.writeBatch(pc, r) {
			own = pc
		}
		if len(p.queue) == 0 {
			p.writing = false
			p.mu.Unlock()
			return own
		}
	}
	p.handOff()
	return own
}

// handOff gives the writer's role to the writer goroutine. Called with mu held
// and writing set; it releases mu.
func (p *pipe) handOff() {
	if p.closed {
		p.failQueued(ErrClosed)
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
				p.failQueued(ErrClosed)
			case p.conn == nil:
				p.connect()
			default:
				p.writeBatch(p.conn, nil)
			}
		}
		p.writing = false
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
			err = ErrClosed // the dial may have failed because Close ended it
			p.failQueued(err)
			return
		}
		// Commands of rounds that started after this dial get a dial of their own:
		// the master may be back by now.
		p.failQueuedBefore(start, err)
		return
	}
	pc := &pipeConn{wc: wc, lastSent: time.Now(), direct: directConn(wc.c)}
	pc.peeker.init(wc.c)
	pc.rpeek.init(wc.c)
	p.conn = pc // read from once commands are in flight (writeBatch)
}

// failQueuedBefore fails the queued commands of rounds that started before t with
// err and keeps the others. Called with mu held.
func (p *pipe) failQueuedBefore(t time.Time, err error) {
	kept := p.queue[:0]
	for _, r := range p.queue {
		if r.rnd.t0.Before(t) {
			p.fail(r, err)
		} else {
			kept = append(kept, r)
		}
	}
	clear(p.queue[len(kept):])
	p.queue = kept
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
func (p *pipe) fail(r *req, err error) {
	if r.state.CompareAndSwap(reqQueued, reqDone) {
		r.rnd.fail(r, err)
	}
}

// writeBatch writes every queued command to pc in one write. Called with mu held
// and the writer's role; it releases mu during the write (and the idle check) and
// holds it again on return; when pc turned out dead, the queue is left as it was.
// A command abandoned before it is written is dropped; one whose deadline passed
// fails unsent. When the batch was self alone and nobody reads pc, the caller
// gets the reader's role (true); otherwise a reader goroutine is started when
// none runs.
func (p *pipe) writeBatch(pc *pipeConn, self *req) (readOwn bool) {
	if pc.inflight.len() == 0 && time.Since(pc.lastSent) >= fresh {
		// A connection idle for a while may have been closed by the master (a
		// restart, its idle timeout, a reset): nobody reads an idle connection, so
		// look first, and send the batch on a new connection rather than fail it.
		p.mu.Unlock()
		err := pc.check()
		if err != nil {
			p.kill(pc, fmt.Errorf("closed while idle: %w", err))
		}
		p.mu.Lock()
	}
	if pc.dead || p.closed {
		return false // the queue is left to the writer's loop
	}
	batch := p.queue
	p.queue = p.spare[:0]
	buf := p.wbuf[:0]
	now := time.Now()
	for _, r := range batch {
		if !now.Before(r.rnd.deadline) {
			p.fail(r, errNotSent)
			continue
		}
		if !r.state.CompareAndSwap(reqQueued, reqWritten) {
			continue // abandoned
		}
		r.sent = now
		r.nxget = r.rnd.nxget && pc.wc.setGet && !r.eval
		pc.lastSent = now
		pc.inflight.push(r)
		buf = r.rnd.appendTo(buf, r.eval, pc.wc.setGet)
	}
	// r may be finished, and its round reused, once written: no r is looked at
	// after this point.
	clear(batch)
	p.spare = batch[:0]
	switch {
	case len(buf) > 0 && !pc.reading:
		pc.reading = true
		if self != nil && pc.inflight.len() == 1 && pc.inflight.peek() == self {
			readOwn, pc.reserved = true, true
		} else {
			p.startReader(pc)
		}
	case len(buf) > 0 && pc.reserved:
		pc.reserved = false // taken over: the round will find it so (readOwn)
		p.startReader(pc)
	}
	p.mu.Unlock()
	if len(buf) > 0 {
		// No write deadline: a write blocks only when the master stops reading,
		// and then its replies stop too; the reader drops the connection after a
		// node timeout, which ends the write.
		if _, err := pc.wc.c.Write(buf); err != nil {
			p.kill(pc, err)
		}
	}
	p.wbuf = buf
	p.mu.Lock()
	return readOwn
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
	_ = pc.wc.c.Close()
	for _, r := range lost {
		if r.state.CompareAndSwap(reqWritten, reqDone) {
			r.rnd.fail(r, err)
		}
	}
	if !errors.Is(err, ErrClosed) {
		p.ps.observe(Event{Kind: EventDropped, Master: p.i, Err: err})
	}
}

// resubmit queues r again (its EVAL after NOSCRIPT) from the reader goroutine,
// which must not write: the writer goroutine does.
func (p *pipe) resubmit(r *req) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.fail(r, ErrClosed)
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
		p.failQueued(ErrClosed)
	}
	p.mu.Unlock()
	if pc != nil {
		p.kill(pc, ErrClosed)
	}
	close(p.stop)
	p.wg.Wait()
	p.mu.Lock()
	p.failQueued(ErrClosed) // what the writer goroutine left when it stopped
	p.mu.Unlock()
}

// directConn reports whether c is a socket (under TLS or not), where a write of a
// few commands on an idle connection never blocks: the kernel buffers it.
func directConn(c net.Conn) bool {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	switch c.(type) {
	case *net.TCPConn, *net.UnixConn:
		return true
	}
	return false
}
