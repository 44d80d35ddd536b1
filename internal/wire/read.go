package wire

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Reading: the driver reads a batch's replies and gives each to the oldest
// command in flight. A round that wrote its command alone on an idle connection
// reads its own reply (readOwn); the pump reads everything else (readBatch).

// readBatch reads the replies of the batch in flight on pc until none is left or
// pc is dropped. A read that times out is not fatal by itself: the deadline may be
// stale (set by a round reading its own reply, or for an earlier command). Only
// when the oldest command in flight has waited a whole node timeout is the master
// hung and the connection dropped. Called by the pump, without mu.
func (p *pipe) readBatch(pc *pipeConn) {
	timeout := p.ps.cfg.Timeout
	p.mu.Lock()
	if h := pc.inflight.peek(); h != nil {
		_ = pc.wc.c.SetReadDeadline(h.sent.Add(timeout))
	}
	p.mu.Unlock()
	for {
		rp, err := pc.wc.readReply()
		if err != nil {
			if !isTimeout(err) {
				p.kill(pc, err)
				return
			}
			p.mu.Lock()
			h := pc.inflight.peek()
			due := time.Time{}
			if h != nil {
				due = h.sent.Add(timeout)
			}
			hung := h != nil && !time.Now().Before(due)
			if hung && pc.rpeek.check() == errUnexpectedRead {
				// The reply is in the socket: this reader was not scheduled in time
				// (a busy machine), the master answered. Read it.
				hung, due = false, time.Now().Add(grace)
			}
			if !hung {
				_ = pc.wc.c.SetReadDeadline(due)
			}
			p.mu.Unlock()
			if hung {
				p.kill(pc, ErrNoReply)
				return
			}
			continue
		}
		// The replies that came with it are read too, and their commands taken
		// from the ring under one lock: a master answers a batch in one or a few
		// writes.
		rps := append(p.rbuf[:0], rp)
		for pc.wc.whole() {
			if rp, err = pc.wc.readReply(); err != nil {
				break // not a timeout: the reply is all there; dropped below
			}
			rps = append(rps, rp)
		}
		p.rbuf = rps
		more := p.takeAll(pc, rps)
		clear(rps)
		if err != nil {
			p.kill(pc, err) // the replies before it were delivered
			return
		}
		if !more {
			return
		}
	}
}

// takeAll gives replies just read on pc to the oldest commands in flight, in
// order, and reports whether commands are still in flight on pc; false when pc was
// dropped (a reply to no command, or out of step).
func (p *pipe) takeAll(pc *pipeConn, rps []reply) (more bool) {
	reqs := p.rreqs[:0]
	p.mu.Lock()
	for range rps {
		reqs = append(reqs, pc.inflight.pop())
	}
	more = pc.inflight.len() > 0
	var sent time.Time
	if reqs[0] != nil {
		sent = reqs[0].sent
	}
	p.mu.Unlock()
	p.rreqs = reqs
	defer clear(reqs)
	now := time.Now() // one clock reading for the replies read together
	p.answered(sent, now)
	for i, r := range reqs {
		if r == nil {
			p.kill(pc, fmt.Errorf("%w: a reply to no command", ErrProtocol))
			return false
		}
		if err := p.deliver(r, rps[i], now); err != nil {
			p.kill(pc, err)
			// The commands after r left the ring with it, so kill did not fail
			// them: they were in flight on the connection it dropped.
			failWritten(reqs[i+1:], err)
			return false
		}
	}
	return more
}

// take gives a reply just read on pc to the oldest command in flight; false when
// pc was dropped (a reply to no command, or out of step).
func (p *pipe) take(pc *pipeConn, rp reply) bool {
	p.mu.Lock()
	r := pc.inflight.pop()
	var sent time.Time
	if r != nil {
		sent = r.sent
	}
	p.mu.Unlock()
	if r == nil {
		p.kill(pc, fmt.Errorf("%w: a reply to no command", ErrProtocol))
		return false
	}
	now := time.Now()
	p.answered(sent, now)
	if err := p.deliver(r, rp, now); err != nil {
		p.kill(pc, err)
		return false
	}
	return true
}

// readOwn is a round reading its own reply on pc, where it wrote r alone and got
// the driver role (submit), unless a command queued since took the role over. It
// reads until deadline, or only what is buffered once ctx is cancelled. When the reply is not there by then it returns false,
// keeping the role, unless last or commands wait behind r: then it hands the role
// to the pump (r stays in flight; the round abandons it if it never comes). Once
// r's reply is read, the role passes to the pump when commands were queued
// meanwhile. r's result reaches the round the usual way (finish).
func (p *pipe) readOwn(ctx context.Context, pc *pipeConn, r *req, deadline time.Time, last bool) (done bool) {
	p.mu.Lock()
	mine := pc.reserved == r
	if mine {
		pc.reserved = nil
	}
	p.mu.Unlock()
	if !mine {
		return true // taken over by the pump, which delivers r's reply
	}
	err := pc.wc.c.SetReadDeadline(deadline)
	if err == nil && errors.Is(ctx.Err(), context.Canceled) {
		// Cancelled since the caller looked: the cancellation may have set the
		// deadline to now before the line above set it again. Only what is
		// buffered is read.
		err = pc.wc.c.SetReadDeadline(time.Now())
	}
	var rp reply
	if err == nil {
		rp, err = pc.wc.readReply()
	}
	switch {
	case err == nil:
		p.take(pc, rp)
	case !isTimeout(err):
		p.kill(pc, err)
	}
	p.mu.Lock()
	if err != nil && isTimeout(err) && !last && !pc.dead && len(p.queue) == 0 {
		pc.reserved = r // try again later; nobody waits behind r
		p.mu.Unlock()
		return false
	}
	// After a timeout r stays in flight: the pump reads its reply, or the round
	// abandons it.
	p.handOn()
	p.mu.Unlock()
	return true
}

// answered records that a reply to a command written at sent was read at now:
// when the master last answered, and how long its answer took (Pipes.answering).
func (p *pipe) answered(sent, now time.Time) {
	p.lastRead.Store(now.UnixNano())
	if !sent.IsZero() {
		p.lastTook.Store(int64(now.Sub(sent)))
	}
}

// deliver gives r's reply, read at now, to r's round, unless the round abandoned r. A NOSCRIPT
// reply queues r again, to be written with EVAL. An error means the connection is
// out of step (a reply of a type the command cannot get) and must be dropped (r
// has failed with it). The reply was read whole before the driver role passed
// on: deliver reads nothing.
func (p *pipe) deliver(r *req, rp reply, now time.Time) error {
	rd := r.rnd // never reused while r is written or abandoned
	if rp.typ == '-' && rd.script != nil && !r.eval && strings.HasPrefix(rp.str, "NOSCRIPT") {
		if r.state.CompareAndSwap(reqWritten, reqQueued) {
			r.eval = true
			p.requeue(r)
		} else {
			p.ps.observe(Event{Kind: EventLateReply, Master: p.i})
		}
		return nil
	}
	var err error
	res := Result{Type: rp.typ, Str: rp.str, Int: rp.num, Array: rp.arr}
	switch {
	case !rd.wants(rp.typ, r.nxget):
		err = fmt.Errorf("%w %q", ErrProtocol, rp.typ)
		res = Result{Err: fmt.Errorf("%w (connection dropped)", err)}
	case rp.typ == '-':
		res.Err = ErrorReply(rp.str)
	}
	if r.state.CompareAndSwap(reqWritten, reqDone) {
		rd.finish(r, res, now)
	} else {
		p.ps.observe(Event{Kind: EventLateReply, Master: p.i}) // abandoned: read and thrown away
	}
	return err
}

// readLineSafe reads one reply line like readLine, but only once the whole reply
// is buffered: its first line and, for a bulk string, its contents. A read that
// fails (a deadline) consumes nothing: what arrived stays buffered, so the
// connection stays in step and another reader can go on from there. (Consuming
// the first line and then failing on the contents would leave the next read in
// the middle of the reply, taking the contents for a reply.)
func (wc *wireConn) readLineSafe() (byte, []byte, error) {
	for {
		if n := wc.rd.Buffered(); n > 0 {
			buf, _ := wc.rd.Peek(n)
			if need, _ := replyNeed(buf); need > 0 {
				// A reply too long for the buffer (an array's) is read as it
				// comes: an error in its middle is not a timeout (readArray).
				if n >= need || n == wc.rd.Size() {
					return wc.readLine()
				}
			} else if n == wc.rd.Size() {
				return 0, nil, fmt.Errorf("%w: line too long", ErrProtocol)
			}
		}
		if _, err := wc.rd.Peek(wc.rd.Buffered() + 1); err != nil {
			return 0, nil, err
		}
	}
}

// replyNeed returns how many bytes of buf the reply at its start takes before
// readLineSafe reads it (its first line, a bulk string's contents, an array's
// elements), 0 when its first line is not all in buf, more than len(buf) when
// the rest is not; long: a bulk string longer than maxBulk, whose contents
// readReply reads past as they come.
func replyNeed(buf []byte) (need int, long bool) { return needAt(buf, 0) }

// needAt is replyNeed for a reply nested depth deep in an array. Its work is
// bounded by len(buf) whatever lengths the reply claims: every element takes at
// least one byte. A malformed line counts as whole: readReply reports it.
func needAt(buf []byte, depth int) (need int, long bool) {
	i := bytes.IndexByte(buf, '\n')
	if i < 0 {
		return 0, false
	}
	need = i + 1
	if i < 2 || buf[i-1] != '\r' || buf[0] != '$' && buf[0] != '*' {
		return need, false
	}
	l, ok := ParseInt(buf[1 : i-1])
	switch {
	case !ok || l < 0:
	case buf[0] == '$' && depth == 0 && l > maxBulk:
		return need, true
	case buf[0] == '$':
		need += int(min(l, maxArrayBulk+2)) + 2 // longer ones never fit the buffer
	case depth < maxDepth && l <= maxArrayLen: // else whole: readReply reports it
		for range l {
			if need >= len(buf) {
				return len(buf) + 1, false
			}
			n, _ := needAt(buf[need:], depth+1)
			if n == 0 {
				return len(buf) + 1, false
			}
			need += n
		}
	}
	return need, false
}

// whole reports whether a whole reply is buffered: readReply then reads it
// without waiting for the network (and without a system call).
func (wc *wireConn) whole() bool {
	n := wc.rd.Buffered()
	if n == 0 {
		return false
	}
	buf, _ := wc.rd.Peek(n)
	need, long := replyNeed(buf)
	return need > 0 && n >= need && !long
}

func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}

// reqRing is a FIFO of commands.
type reqRing struct {
	buf  []*req
	head int
	n    int
}

func (q *reqRing) len() int { return q.n }

func (q *reqRing) push(r *req) {
	if q.n == len(q.buf) {
		grown := make([]*req, max(8, 2*len(q.buf)))
		for i := range q.n {
			grown[i] = q.buf[(q.head+i)%len(q.buf)]
		}
		q.buf, q.head = grown, 0
	}
	q.buf[(q.head+q.n)%len(q.buf)] = r
	q.n++
}

func (q *reqRing) peek() *req {
	if q.n == 0 {
		return nil
	}
	return q.buf[q.head]
}

func (q *reqRing) pop() *req {
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
func (q *reqRing) drain() []*req {
	out := make([]*req, 0, q.n)
	for q.n > 0 {
		out = append(out, q.pop())
	}
	return out
}
