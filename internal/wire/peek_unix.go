//go:build unix

package wire

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"syscall"
)

var errUnexpectedRead = errors.New("unexpected data on an idle connection")

// peeker looks at a TCP socket without reading from it, to tell whether the master
// closed an idle connection before a command is written on it. It peeks (MSG_PEEK)
// outside the connection's read lock, which its reader goroutine holds while it
// waits, so nothing is taken from under the reader.
type peeker struct {
	raw    syscall.RawConn
	fn     func(fd uintptr)
	result error
}

func (p *peeker) init(c net.Conn) {
	if tc, ok := c.(*tls.Conn); ok {
		// Under TLS a close shows as data (the close_notify alert) or EOF: either
		// way the connection is dialled again, which costs a dial, never a wrong read.
		c = tc.NetConn()
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return // a custom Dialer's connection: the check passes
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return
	}
	p.raw = raw
	p.fn = p.peek
}

func (p *peeker) peek(fd uintptr) {
	var b [1]byte
	n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	switch {
	case n == 0 && err == nil:
		p.result = io.EOF
	case n > 0:
		p.result = errUnexpectedRead
	case err == syscall.EAGAIN || err == syscall.EWOULDBLOCK || err == syscall.EINTR:
		p.result = nil
	default:
		p.result = err
	}
}

// check tells whether an idle connection is still usable: the master has not
// closed it (idle timeout, restart, reset) nor sent anything unasked. It must only
// be called by the holder of the pipe's writer role (the result is kept in p).
// Connections it cannot see through (a custom Dialer's) pass.
func (p *peeker) check() error {
	if p.raw == nil {
		return nil
	}
	if err := p.raw.Control(p.fn); err != nil {
		return err
	}
	return p.result
}
