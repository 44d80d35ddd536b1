package wire

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
)

// Conn is one connection to one master beside the pipes', for commands whose
// replies are long and read piece by piece (a listing's SCAN steps and reads
// of keys): an array's header, then each bulk string straight into the
// caller's buffer, up to a cap of the caller's (a longer one is read past and
// not kept). Its reads share the pipes' parsing of lines and bulk strings
// (lines.go), not their limits: a Conn reads replies of any number of elements
// and bulk strings of up to 512 MiB (read past beyond the caller's cap). It also
// reads RESP3 replies and pushes whole (Value, value.go: a loss watch's
// tracking connection).
//
// A Conn is used by one goroutine at a time, but for one reading with Value
// while another writes with Send or SendBy. After any error but an error reply
// (an ErrorReply, which leaves it in step), it is out of step: close it.
type Conn struct {
	wc  *wireConn
	out []byte // a script call being written
}

// connBuf is a Conn's read buffer: long replies come in many pieces.
const connBuf = 64 << 10

// keepOut is the most a Conn's write buffer keeps between calls.
const keepOut = 64 << 10

// Dial connects to m as the pipes do (its Dialer, or TCP; then TLS when
// configured) and opens the connection as they do (AUTH, SELECT), within
// deadline; ctx's end ends it at once. It reads no INFO: a Conn has no part in
// the pipes' handshake callbacks (Config.OnInfo).
func Dial(ctx context.Context, m Master, deadline time.Time) (*Conn, error) {
	wc, err := dialMaster(ctx, &m, deadline, connBuf, func(wc *wireConn) error {
		buf := appendLogin(nil, &m)
		if len(buf) == 0 {
			return nil
		}
		if _, err := wc.c.Write(buf); err != nil {
			return err
		}
		return wc.readLogin(&m)
	})
	if err != nil {
		return nil, err
	}
	return &Conn{wc: wc}, nil
}

// NewConn returns a Conn over c, whose handshake (if any) is done.
func NewConn(c net.Conn) *Conn { return &Conn{wc: newWireConn(c, connBuf)} }

// Close closes the connection.
func (c *Conn) Close() error { return c.wc.c.Close() }

// Bind makes the Conn's reads and writes end at deadline, or as soon as ctx is
// done (a cancellation that comes while Bind runs included), until stop is
// called; after stop, the deadline stays as it was set.
func (c *Conn) Bind(ctx context.Context, deadline time.Time) (stop func() bool) {
	_ = c.wc.c.SetDeadline(deadline)
	return context.AfterFunc(ctx, func() { _ = c.wc.c.SetDeadline(time.Unix(1, 0)) })
}

// Extend moves the deadline of Bind to deadline, for the next command of a
// series bound to ctx once; when ctx is done already, the reads and writes end
// at once all the same.
func (c *Conn) Extend(ctx context.Context, deadline time.Time) {
	_ = c.wc.c.SetDeadline(deadline)
	if ctx.Err() != nil {
		_ = c.wc.c.SetDeadline(time.Unix(1, 0)) // ctx's AfterFunc may have run before the line above
	}
}

// Send writes b (commands, encoded as AppendCommand does) whole.
func (c *Conn) Send(b []byte) error {
	_, err := c.wc.c.Write(b)
	return err
}

// Header reads the first line of a reply of type want ('*', '$' or ':') and
// returns its number: an array's or a bulk string's length (-1: nil), or an
// integer. An error reply is an ErrorReply.
func (c *Conn) Header(want byte) (int64, error) { return c.wc.header(want) }

// OK reads a simple-string reply (+OK, +QUEUED); an error reply is an
// ErrorReply.
func (c *Conn) OK() error { return c.wc.readOK() }

// Bulk reads a bulk string reply (or element) and appends its bytes to dst, read
// straight into it; one longer than limit is read past and not kept (kept
// false), so a reply of hundreds of megabytes is never held. A nil bulk string
// is ErrProtocol; an error reply is an ErrorReply.
func (c *Conn) Bulk(dst []byte, limit int) (out []byte, kept bool, err error) {
	n, err := c.wc.header('$')
	switch {
	case err != nil:
		return dst, false, err
	case n < 0 || n > maxConnBulk:
		return dst, false, fmt.Errorf("%w: a bulk string of %d bytes", ErrProtocol, n)
	}
	return c.wc.bulkInto(dst, n, limit)
}

// Script runs s over keys and args (EVALSHA, then EVAL when the master has not
// got it: NOSCRIPT, after a restart or a SCRIPT FLUSH), and reads the first line
// of its reply, of type want, as Header does; the caller reads the rest.
func (c *Conn) Script(s *Script, keys, args []string, want byte) (int64, error) {
	n, err := c.script(false, s, keys, args, want)
	var re ErrorReply
	if errors.As(err, &re) && strings.HasPrefix(string(re), "NOSCRIPT") {
		n, err = c.script(true, s, keys, args, want)
	}
	if cap(c.out) > keepOut {
		c.out = nil
	}
	return n, err
}

func (c *Conn) script(eval bool, s *Script, keys, args []string, want byte) (int64, error) {
	c.out = appendScript(c.out[:0], eval, s, keys, args)
	if err := c.Send(c.out); err != nil {
		return 0, err
	}
	return c.Header(want)
}
