package wire

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// A pipe is one master's side of the wire fast path: a queue of commands waiting to
// be written, at most one connection, and whoever holds the pipe's driver role.
//
// One batch is in flight on a connection at a time: the commands that arrive
// while a batch awaits its replies queue up, and leave together, in one write,
// once the last reply of the batch is read. The deeper the load, the deeper the
// batches (and the fewer system calls and wake-ups, here and at the master), with
// no wait at low load: a command that finds the pipe idle is written at once.
// Under contention the next batch waits, 400 µs at most, for the rest of the wave
// of commands that the last one's replies release (gather, pump.go).
//
// The driver writes the queue and reads the replies. At low load it is the round
// that found the pipe idle: it writes its own command and reads its own reply (no
// hand-off between goroutines, as in the floor). Otherwise it is the pipe's pump
// goroutine, which reads a batch's replies, writes the next batch, and ends when
// nothing is queued or in flight, dialling first when there is no connection.
//
// The lock (mu) is never held across network I/O: writes, reads and dials happen
// outside it.

// errNotSent is the result of a command still queued at its deadline (the master's
// connection was being dialled, or its batch in flight was not answered).
var errNotSent = fmt.Errorf("not sent within the node timeout: %w", ErrNoReply)

type pipe struct {
	ps *Pipes
	i  int // the master's index

	mu      sync.Mutex
	queue   []*req    // waiting to be written, in order
	spare   []*req    // the queue's other buffer
	conn    *pipeConn // nil: dial before the next write
	driving bool      // someone holds the driver role; when false, nothing is queued or in flight
	// depth is how many commands the last batch carried: above 1, the pipe is
	// contended, and a command that finds it idle is left to the pump, which
	// gathers the others arriving with it, rather than written alone.
	depth  int
	closed bool
	// awaiting: the pump waits in linger for the wave's next command, which
	// signals arrived. Written with mu held; read without it by roundEnded.
	awaiting atomic.Bool
	arrived  chan struct{}
	silence  *time.Timer // linger's; the pump only

	// lastRead is when a reply was last read from the master (Unix ns), lastTook
	// how long after its command was written (ns): a round that a quorum granted
	// waits on for a master still answering at its pace (round.go).
	lastRead, lastTook atomic.Int64

	runPump func()  // p.pump
	wbuf    []byte  // the write buffer; used by the driver only
	rbuf    []reply // the replies read at once; the pump only
	rreqs   []*req  // their commands; the pump only
	wg      sync.WaitGroup
}

// pipeConn is one connection of a pipe and the commands written on it whose reply
// has not been read, oldest first (under the pipe's lock).
type pipeConn struct {
	wc       *wireConn
	inflight reqRing
	// reserved: the round of this command holds the driver role but is not
	// reading yet (it reads its masters one after the other). A command queued
	// behind its own hands the role to the pump goroutine, so that the round,
	// waiting on another master, never holds up other rounds' commands.
	reserved *req
	wdl      bool // a write deadline is set; the driver only
	dead     bool
	direct   bool   // a TCP or Unix socket (under TLS or not): an idle write never blocks
	peeker          // the idle check (peek_unix.go); the driver only
	rpeek    peeker // the reader's look at a socket before it calls a master hung
}

func newPipe(ps *Pipes, i int) *pipe {
	p := &pipe{ps: ps, i: i, arrived: make(chan struct{}, 1)}
	p.runPump = p.pump
	return p
}

// submit queues r. When the pipe is idle and connected the caller writes r at
// once and gets the connection back: it then holds the driver role and must call
// readOwn. Otherwise the driver writes r with the next batch.
func (p *pipe) submit(r *req) *pipeConn {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.fail(r, ErrClosed)
		return nil
	}
	p.queue = append(p.queue, r)
	if p.awaiting.Load() {
		p.wake()
	}
	if p.driving {
		if pc := p.conn; pc != nil && pc.reserved != nil {
			pc.reserved = nil // taken over: the round will find it so (readOwn)
			p.startPump()
		}
		p.mu.Unlock()
		return nil
	}
	p.driving = true
	// Idle: nothing in flight that a stalled write could be waiting behind. Only on
	// a socket: a custom Dialer's connection may block a write until its peer
	// reads (net.Pipe, a flow-controlled tunnel), and the round would be stuck in
	// it, with no reader to find the peer hung.
	if pc := p.conn; pc != nil && pc.direct && p.depth <= 1 && p.writeBatch(pc, r) {
		p.mu.Unlock()
		return pc
	}
	p.handOn()
	p.mu.Unlock()
	return nil
}

// wake wakes the pump lingering in gather (linger). Called with mu held. The
// token may be left over when the linger ends on its timer meanwhile (the next
// linger drops it); the send never blocks.
func (p *pipe) wake() {
	p.awaiting.Store(false)
	select {
	case p.arrived <- struct{}{}:
	default:
	}
}

// handOn is called by the driver with mu held when it stops driving: the role
// passes to the pump goroutine when something is queued or in flight, and ends
// otherwise.
func (p *pipe) handOn() {
	switch {
	case p.closed:
		p.failQueued(ErrClosed) // what is in flight failed with the connection
		p.driving = false
	case len(p.queue) > 0 || p.conn != nil && p.conn.inflight.len() > 0:
		p.startPump()
	default:
		p.driving = false
	}
}

// startPump starts the pump goroutine, which takes the driver role over. Called
// with mu held.
func (p *pipe) startPump() {
	if p.closed {
		p.failQueued(ErrClosed) // Close kills the connection, which fails what is in flight
		p.driving = false
		return
	}
	p.wg.Add(1)
	go p.runPump() // a func value bound once: go p.pump() would allocate a closure each time
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

// writeBatch writes every queued command to pc, which has nothing in flight, in
// one write. Called by the driver with mu held; it releases mu during the write
// (and the idle check: commands may join the batch meanwhile) and holds it again
// on return; when pc turned out dead, the queue is left as it was. A command abandoned before it is written is dropped;
// one whose deadline passed fails unsent. When the batch was self alone, the
// caller keeps the driver role, reserved, to read its own reply (true).
func (p *pipe) writeBatch(pc *pipeConn, self *req) (own bool) {
	if pc.wc.rd.Buffered() > 0 {
		// Nothing is in flight, yet a reply was read: a reply to no command. The
		// connection is out of step; the batch goes on a new one.
		p.mu.Unlock()
		p.kill(pc, fmt.Errorf("%w: a reply to no command", ErrProtocol))
		p.mu.Lock()
	} else {
		// An idle connection may have been closed by the master (a restart, its
		// idle timeout, a reset), or have got a reply to no command since its
		// last batch's replies were read: nobody reads an idle connection, so look
		// first (a system call, however recent the last batch: a reply to no
		// command a moment after it would be read as this batch's first), and
		// send the batch on a new connection rather than fail it.
		p.mu.Unlock()
		err := pc.idleCheck(self)
		if err != nil {
			p.kill(pc, fmt.Errorf("closed while idle: %w", err))
		}
		p.mu.Lock()
	}
	if pc.dead || p.closed {
		return false // the queue is left to the driver
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
		pc.inflight.push(r)
		if r != self || len(batch) > 1 {
			buf = r.rnd.appendTo(buf, r.eval, pc.wc.setGet)
		}
	}
	// r may be finished, and its round reused, once written: no r is looked at
	// after this point.
	clear(batch)
	p.spare = batch[:0]
	own = self != nil && pc.inflight.len() == 1 && pc.inflight.peek() == self
	if own {
		// Written alone, the round's command goes from the round's own buffer:
		// the pump may take the role over, read the reply and write the next
		// batch from wbuf before this Write returns.
		buf = self.rnd.encoded(pc.wc.setGet)
	} else {
		p.wbuf = buf
	}
	if len(buf) == 0 {
		return false
	}
	p.depth = pc.inflight.len()
	pc.reserved = nil
	if own {
		pc.reserved = self
	}
	p.mu.Unlock()
	// Nothing is in flight before this batch, so the master owes no reply that it
	// could be blocked writing: the write blocks only when the master stops
	// reading. A batch's write ends a node timeout after it starts all the same (a
	// long batch, a custom Dialer's connection, a peer that stopped), which drops
	// the connection; a round's own command is a few bytes on an idle socket,
	// which the kernel buffers. The bound counts from now, not from before the
	// lock was released: a descheduled pump must not find it passed.
	var err error
	switch {
	case !own:
		err, pc.wdl = pc.wc.c.SetWriteDeadline(time.Now().Add(p.ps.cfg.Timeout)), true
	case pc.wdl:
		err, pc.wdl = pc.wc.c.SetWriteDeadline(time.Time{}), false
	}
	if err == nil {
		_, err = pc.wc.c.Write(buf)
	}
	if err != nil {
		p.kill(pc, err)
	}
	p.mu.Lock()
	return own
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
	failWritten(lost, err)
	if !errors.Is(err, ErrClosed) {
		p.ps.observe(Event{Kind: EventDropped, Master: p.i, Err: err})
	}
}

// failWritten fails with err each command of rs still written and waiting for
// its reply (a round that abandoned one keeps it); nil entries are skipped.
func failWritten(rs []*req, err error) {
	for _, r := range rs {
		if r != nil && r.state.CompareAndSwap(reqWritten, reqDone) {
			r.rnd.fail(r, err)
		}
	}
}

// requeue queues r again (its EVAL after NOSCRIPT), to be written by the driver,
// which calls it, with the next batch.
func (p *pipe) requeue(r *req) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		p.fail(r, ErrClosed)
		return
	}
	p.queue = append(p.queue, r)
}

// close fails what is queued and in flight and waits for the pump to end.
func (p *pipe) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	if p.awaiting.Load() {
		p.wake() // the pump, lingering, sees closed
	}
	pc := p.conn
	if !p.driving {
		p.failQueued(ErrClosed)
	}
	p.mu.Unlock()
	if pc != nil {
		p.kill(pc, ErrClosed)
	}
	p.wg.Wait()
	p.mu.Lock()
	p.failQueued(ErrClosed) // what a round holding the driver role left
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
