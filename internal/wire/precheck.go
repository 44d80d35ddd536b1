package wire

// The idle check before a round's own write (writeBatch) is one system call per
// master: a peek at the socket. A round that finds several masters' pipes idle
// looks at all their sockets in one poll(2) before it writes to any (precheck,
// precheck_unix.go) and writes on each connection the poll found quiet without
// peeking again; a connection the poll found readable, closed or failed is
// peeked as before (the peek tells a reply to no command from a close). The
// check still comes before the write on every idle connection; it comes a few
// writes earlier for all but the first master written (the last one: Round)
// (SAFETY.md, Pipelined commands).

// idleCheck is the idle check of pc, about to carry self's batch: the round's
// own poll when it looked at pc and found it quiet, else a peek (peeker.check).
// Called by the driver without mu.
func (pc *pipeConn) idleCheck(self *req) error {
	if self != nil && self.polled == pc {
		self.polled = nil
		if !self.pollBusy {
			return nil
		}
	}
	return pc.check()
}

// idleConn returns p's connection when the pipe is idle (no driver, nothing
// queued or in flight, not contended) on a socket, nil otherwise or when the
// pipe's lock is held: a busy pipe is not waited for.
func (p *pipe) idleConn() *pipeConn {
	if !p.mu.TryLock() {
		return nil
	}
	defer p.mu.Unlock()
	if p.driving || p.closed || p.depth > 1 || len(p.queue) > 0 {
		return nil
	}
	if pc := p.conn; pc != nil && pc.direct && !pc.dead {
		return pc
	}
	return nil
}
