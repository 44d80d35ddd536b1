//go:build unix

package quorum

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"syscall"
)

var errUnexpectedRead = errors.New("unexpected data on an idle connection")

// probe reads a plain TCP socket without blocking, to tell whether the master
// closed an idle connection. It is set up once per connection so that a check
// allocates nothing.
type probe struct {
	raw    syscall.RawConn
	fn     func(fd uintptr) bool
	result error
}

func (p *probe) init(c net.Conn) {
	if tc, ok := c.(*tls.Conn); ok {
		// The socket under TLS: once a reply was read no TLS record is pending (the
		// server's session tickets precede its first reply), so a close shows as EOF;
		// anything else drops the connection, which costs a dial, never a wrong read.
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
	p.fn = p.read
}

func (p *probe) read(fd uintptr) bool {
	var b [1]byte
	n, err := syscall.Read(int(fd), b[:])
	switch {
	case n == 0 && err == nil:
		p.result = io.EOF
	case n > 0:
		p.result = errUnexpectedRead
	case err == syscall.EAGAIN || err == syscall.EWOULDBLOCK:
		p.result = nil
	default:
		p.result = err
	}
	return true
}

// check tells whether an idle connection is still usable: the master has not
// closed it (idle timeout, restart, reset) nor sent anything unasked.
// Connections it cannot see through (a custom Dialer's) pass.
func (wc *wireConn) check() error {
	if wc.raw == nil {
		return nil
	}
	if err := wc.raw.Read(wc.fn); err != nil {
		return err
	}
	return wc.result
}
