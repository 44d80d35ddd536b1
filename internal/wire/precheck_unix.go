//go:build unix

package wire

import "golang.org/x/sys/unix"

// maxPolled bounds the masters one poll looks at (the poll's array stays on the
// stack); the others are peeked.
const maxPolled = 16

// precheck looks at the sockets of the masters whose pipes are idle in one
// poll(2), before any of rd's commands is written, and marks each req with what
// it saw (idleCheck). It does nothing when the first pipe is busy (a loaded set
// of pipes batches its commands: the pump writes them, peeking once per batch),
// when fewer than two pipes are idle (one peek costs what one poll does), or
// when the poll fails. A socket's descriptor is used outside the connection's
// Control: the connection may be closed, and its descriptor reused, meanwhile;
// then the connection is dead before it is closed (kill), writeBatch sees that
// after the check, and the poll's result is never used.
func (ps *Pipes) precheck(rd *round) {
	var fds [maxPolled]unix.PollFd
	var at [maxPolled]int // the master of each fds[k]
	var conns [maxPolled]*pipeConn
	n := 0
	for i, p := range ps.pipes {
		pc := p.idleConn()
		if pc == nil {
			if i == 0 {
				return
			}
			continue
		}
		if n == len(fds) {
			break
		}
		fd, ok := rd.fdOf(i, pc)
		if !ok {
			continue
		}
		fds[n], at[n], conns[n] = unix.PollFd{Fd: fd, Events: unix.POLLIN}, i, pc
		n++
	}
	if n < 2 {
		return
	}
	if _, err := unix.Poll(fds[:n], 0); err != nil {
		return // EINTR, ENOMEM: each connection is peeked
	}
	for k := range n {
		r := &rd.reqs[at[k]]
		r.polled, r.pollBusy = conns[k], fds[k].Revents != 0
	}
}

// fdOf returns the descriptor of pc's socket (master i), kept by the round
// for the connection's life; false when pc's socket cannot be looked at (a
// custom Dialer's connection).
func (rd *round) fdOf(i int, pc *pipeConn) (int32, bool) {
	if rd.fdConn == nil {
		rd.fdConn, rd.fd = make([]*pipeConn, len(rd.reqs)), make([]int32, len(rd.reqs))
	}
	if rd.fdConn[i] == pc {
		return rd.fd[i], true
	}
	if pc.raw == nil {
		return 0, false
	}
	fd := int32(-1)
	if err := pc.raw.Control(func(f uintptr) { fd = int32(f) }); err != nil || fd < 0 {
		return 0, false
	}
	rd.fdConn[i], rd.fd[i] = pc, fd
	return fd, true
}
