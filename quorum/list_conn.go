package quorum

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redlock/redlock/internal/keyspace"
	"github.com/redlock/redlock/internal/wire"
)

// The connections of SCAN listings (list_resp.go): a raw RESP2 connection per
// master, kept idle between listings, and the reading of its replies without
// go-redis's objects, each into a caller's buffer.

// listKeyCap is the longest key a listing reads: longer keys (no lock name is
// longer than MaxNameLen; hostile names of tens of kilobytes are listed) are
// read past and not listed, so that a key name of hundreds of megabytes is
// never held.
const listKeyCap = 1 << 20

// errListProtocol: a master's reply to a listing that does not parse.
var errListProtocol = errors.New("unexpected reply")

// listConn is one raw connection of listings to one master.
type listConn struct {
	c     net.Conn
	rd    *bufio.Reader
	out   []byte
	batch scanBatch // reused by every listing on the connection
}

// listConns keeps one idle listing connection of a master between listings.
type listConns struct {
	mu     sync.Mutex
	idle   *listConn
	closed bool
}

// listConn returns the idle connection (reused true), or dials a new one.
func (n *node) listConn(ctx context.Context, timeout time.Duration) (lc *listConn, reused bool, err error) {
	n.list.mu.Lock()
	lc = n.list.idle
	n.list.idle = nil
	n.list.mu.Unlock()
	if lc != nil {
		return lc, true, nil
	}
	lc, err = dialList(ctx, n, timeout)
	return lc, false, err
}

// putListConn keeps lc for the next listing (closing what it replaces), or
// closes it once the Manager is closed or when err says it is out of step.
func (n *node) putListConn(lc *listConn, err error) {
	if err != nil {
		_ = lc.c.Close()
		return
	}
	n.list.mu.Lock()
	old := n.list.idle
	if n.list.closed {
		old = lc
	} else {
		n.list.idle = lc
	}
	n.list.mu.Unlock()
	if old != nil {
		_ = old.c.Close()
	}
}

// closeList closes the idle listing connection; later ones are closed when
// put back.
func (n *node) closeList() {
	n.list.mu.Lock()
	old := n.list.idle
	n.list.idle, n.list.closed = nil, true
	n.list.mu.Unlock()
	if old != nil {
		_ = old.c.Close()
	}
}

// dialList connects to n as its go-redis client does (its dialer: TCP or the
// node's own, then TLS when configured), then AUTH and SELECT as configured.
func dialList(ctx context.Context, n *node, timeout time.Duration) (*listConn, error) {
	opt := n.client.Options()
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := opt.Dialer(dctx, "tcp", opt.Addr)
	if err != nil {
		return nil, fmt.Errorf("dial: %w", err)
	}
	lc := &listConn{c: c, rd: bufio.NewReaderSize(c, 64<<10)}
	var args [][]string
	switch {
	case opt.Username != "":
		args = append(args, []string{"AUTH", opt.Username, opt.Password})
	case opt.Password != "":
		args = append(args, []string{"AUTH", opt.Password})
	}
	if opt.DB != 0 {
		args = append(args, []string{"SELECT", strconv.Itoa(opt.DB)})
	}
	if len(args) == 0 {
		return lc, nil
	}
	stop := lc.deadline(dctx)
	defer stop()
	for _, a := range args {
		lc.out = wire.AppendCommand(lc.out, a...)
	}
	err = lc.flush()
	for _, a := range args {
		if err == nil {
			err = lc.readOK()
			if err != nil {
				err = fmt.Errorf("%s: %w", a[0], err)
			}
		}
	}
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	return lc, nil
}

// deadline makes the connection's reads and writes end with ctx's deadline and
// as soon as ctx is done; stop undoes the latter.
func (lc *listConn) deadline(ctx context.Context) (stop func() bool) {
	d, ok := ctx.Deadline()
	if !ok {
		d = time.Time{}
	}
	_ = lc.c.SetDeadline(d)
	return context.AfterFunc(ctx, func() { _ = lc.c.SetDeadline(time.Unix(1, 0)) })
}

// flush writes the commands buffered in out.
func (lc *listConn) flush() error {
	_, err := lc.c.Write(lc.out)
	lc.out = lc.out[:0]
	return err
}

// The commands that read one key of a batch, around its name.
var (
	getrangeHead = []byte("*4\r\n$8\r\nGETRANGE\r\n")
	getrangeTail = []byte("$1\r\n0\r\n$" + strconv.Itoa(len(strconv.Itoa(keyspace.ValueReadCap-1))) + "\r\n" + strconv.Itoa(keyspace.ValueReadCap-1) + "\r\n")
	pttlHead     = []byte("*2\r\n$4\r\nPTTL\r\n")
)

// appendReadKey appends GETRANGE key 0 ValueReadCap-1 and PTTL key, as
// wire.AppendCommand would.
func appendReadKey(b []byte, key string) []byte {
	b = wire.AppendBulk(append(b, getrangeHead...), key)
	b = append(b, getrangeTail...)
	return wire.AppendBulk(append(b, pttlHead...), key)
}

// line reads one reply line: its type byte and its body, valid until the next
// read. An error reply is returned as an error.
func (lc *listConn) line() (byte, []byte, error) {
	l, err := lc.rd.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return 0, nil, fmt.Errorf("%w: a line of more than %d bytes", errListProtocol, lc.rd.Size())
		}
		return 0, nil, err
	}
	if len(l) < 3 || l[len(l)-2] != '\r' {
		return 0, nil, fmt.Errorf("%w: a short line", errListProtocol)
	}
	return l[0], l[1 : len(l)-2], nil
}

// respError is an error reply of a master.
type respError string

func (e respError) Error() string { return string(e) }

// header reads a line of type want ('*', '$', ':') and returns its number; an
// error reply is a respError.
func (lc *listConn) header(want byte) (int64, error) {
	typ, l, err := lc.line()
	switch {
	case err != nil:
		return 0, err
	case typ == '-':
		return 0, respError(strings.Clone(string(l)))
	case typ != want:
		return 0, fmt.Errorf("%w: %q where %q was due", errListProtocol, typ, want)
	}
	v, ok := wire.ParseInt(l)
	if !ok {
		return 0, fmt.Errorf("%w: a bad number", errListProtocol)
	}
	return v, nil
}

// readOK reads a simple-string reply.
func (lc *listConn) readOK() error {
	typ, l, err := lc.line()
	switch {
	case err != nil:
		return err
	case typ == '-':
		return respError(strings.Clone(string(l)))
	case typ != '+':
		return fmt.Errorf("%w: %q", errListProtocol, typ)
	}
	return nil
}

// bulk appends a bulk string of n bytes (its header read) to dst, or reads
// past it without keeping it when it is longer than limit (ok false).
func (lc *listConn) bulk(dst []byte, n int64, limit int) ([]byte, bool, error) {
	if n < 0 || n > 512<<20 {
		return dst, false, fmt.Errorf("%w: a bulk string of %d bytes", errListProtocol, n)
	}
	if n > int64(limit) {
		if _, err := lc.rd.Discard(int(n)); err != nil {
			return dst, false, err
		}
		return dst, false, lc.crlf()
	}
	start := len(dst)
	dst = append(dst, make([]byte, n)...)
	if _, err := io.ReadFull(lc.rd, dst[start:]); err != nil {
		return dst[:start], false, err
	}
	return dst, true, lc.crlf()
}

func (lc *listConn) crlf() error {
	b, err := lc.rd.Peek(2)
	if err != nil {
		return err
	}
	if b[0] != '\r' || b[1] != '\n' {
		return fmt.Errorf("%w: a bulk string without CRLF", errListProtocol)
	}
	_, err = lc.rd.Discard(2)
	return err
}
