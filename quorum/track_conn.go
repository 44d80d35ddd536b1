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
	"time"

	"github.com/redlock/redlock/internal/keyspace"
	"github.com/redlock/redlock/internal/wire"
)

// The connection of the loss watch to one master (track.go): dialled and opened
// as the transport's connections are (wire.Dial), switched to
// RESP3 with HELLO 3 and CLIENT TRACKING ON, so that the master pushes an
// invalidation on this very connection when a key it read changes. Another
// client cannot forge those pushes (unlike REDIRECT to __redis__:invalidate, a
// channel anyone may PUBLISH to). A master that refuses either command is read
// again periodically instead.

// trackValueCap bounds the values the watch reads: longer ones are read past
// and count as another holder's (a lock value is never longer: maxValueLen).
const trackValueCap = keyspace.ValueReadCap

// errTrackProtocol: a reply of the tracking connection that does not parse.
var errTrackProtocol = errors.New("unexpected reply on the loss-watch connection")

// rval is one RESP2/RESP3 reply, read only as far as the watch needs it.
type rval struct {
	typ  byte   // the RESP type byte
	null bool   // a null (RESP3 _, or a RESP2 null bulk or array)
	long bool   // a bulk longer than trackValueCap, read past
	str  string // a simple or bulk string, or an error's text
	arr  []rval // an array, set or push
}

// trackConn is the loss watch's connection to one master, read as RESP3
// (readRval).
type trackConn struct {
	c   net.Conn
	rd  *bufio.Reader
	out []byte
}

// deadline makes the connection's reads and writes end with ctx's deadline and
// as soon as ctx is done; stop undoes the latter.
func (lc *trackConn) deadline(ctx context.Context) (stop func() bool) {
	d, ok := ctx.Deadline()
	if !ok {
		d = time.Time{}
	}
	_ = lc.c.SetDeadline(d)
	return context.AfterFunc(ctx, func() { _ = lc.c.SetDeadline(time.Unix(1, 0)) })
}

// flush writes the commands buffered in out.
func (lc *trackConn) flush() error {
	_, err := lc.c.Write(lc.out)
	lc.out = lc.out[:0]
	return err
}

// dialTracker dials n's tracking connection as the transport dials and opens
// its own (wire.Dial: the node's Dialer, TLS, AUTH, SELECT); tracking reports
// whether the master accepted HELLO 3 and CLIENT TRACKING ON (else the
// connection is RESP2 or untracked, and the watch polls through it).
func dialTracker(ctx context.Context, n *node, timeout time.Duration) (lc *trackConn, tracking bool, err error) {
	wc, err := wire.Dial(ctx, n.master, time.Now().Add(timeout))
	if err != nil {
		return nil, false, err
	}
	c, rd := wc.NetConn()
	lc = &trackConn{c: c, rd: rd}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	stop := lc.deadline(dctx)
	defer stop()
	lc.out = wire.AppendCommand(lc.out, "HELLO", "3")
	if err = lc.flush(); err == nil {
		var v rval
		if v, err = readRval(lc.rd); err == nil && v.typ != '-' {
			lc.out = wire.AppendCommand(lc.out, "CLIENT", "TRACKING", "ON")
			if err = lc.flush(); err == nil {
				v, err = readRval(lc.rd)
				tracking = err == nil && v.typ == '+'
			}
		}
		if err == nil && v.typ == '-' && transient(v.str) {
			// Busy or loading for now: refused now, not for the connection's
			// life. Dial again rather than poll through it.
			err = fmt.Errorf("%s: %w", n.name, errors.New(v.str))
		}
	}
	if err != nil {
		_ = lc.c.Close()
		return nil, false, err
	}
	_ = lc.c.SetDeadline(time.Time{})
	return lc, tracking, nil
}

// transient reports whether a master's error reply refuses for now only (a
// script running past the busy threshold, a data set loading): the same command
// is accepted once it ends.
func transient(msg string) bool {
	return strings.HasPrefix(msg, "BUSY") || strings.HasPrefix(msg, "LOADING")
}

// readRval reads one reply. Errors are returned as values (typ '-'); err is
// only a broken or out-of-step connection.
func readRval(rd *bufio.Reader) (rval, error) {
	l, err := rd.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return rval{}, fmt.Errorf("%w: a line of more than %d bytes", errTrackProtocol, rd.Size())
		}
		return rval{}, err
	}
	if len(l) < 3 || l[len(l)-2] != '\r' {
		return rval{}, fmt.Errorf("%w: a short line", errTrackProtocol)
	}
	typ, body := l[0], string(l[1:len(l)-2])
	v := rval{typ: typ}
	switch typ {
	case '+', '-', ':', ',', '(', '#':
		v.str = strings.Clone(body)
		return v, nil
	case '_':
		v.null = true
		return v, nil
	case '$', '!', '=':
		return readBulk(rd, v, body)
	case '*', '~', '>', '%', '|':
		n, err := strconv.Atoi(body)
		if err != nil {
			return v, fmt.Errorf("%w: length %q", errTrackProtocol, body)
		}
		if n < 0 {
			v.null = true
			return v, nil
		}
		if typ == '%' || typ == '|' {
			n *= 2
		}
		for range n {
			e, err := readRval(rd)
			if err != nil {
				return v, err
			}
			if typ != '|' {
				v.arr = append(v.arr, e)
			}
		}
		if typ == '|' { // an attribute precedes the reply it describes
			return readRval(rd)
		}
		return v, nil
	}
	return v, fmt.Errorf("%w: type %q", errTrackProtocol, typ)
}

// readBulk reads a bulk string's body of the length given, reading past (and
// marking long) one longer than trackValueCap.
func readBulk(rd *bufio.Reader, v rval, body string) (rval, error) {
	n, err := strconv.ParseInt(body, 10, 64)
	switch {
	case err != nil:
		return v, fmt.Errorf("%w: length %q", errTrackProtocol, body)
	case n < 0:
		v.null = true
		return v, nil
	case n > trackValueCap:
		v.long = true
		_, err = io.CopyN(io.Discard, rd, n+2)
		return v, err
	}
	b := make([]byte, n+2)
	if _, err = io.ReadFull(rd, b); err != nil {
		return v, err
	}
	v.str = string(b[:n])
	return v, nil
}

// invalidated is what one invalidation push names: keys, keys longer than
// trackValueCap (read past, so unnamed), or every key (all).
type invalidated struct {
	keys []string
	long bool // some key was longer than trackValueCap
	all  bool // FLUSHALL, FLUSHDB, a tracking table full, or a new connection
}

// invalidation returns what a RESP3 invalidate push names, all for a null one
// (FLUSHALL, FLUSHDB, a tracking table full); ok is false for any other push or
// reply. A key longer than trackValueCap was read past: long says so, and the
// tracker reads again every watched key that long (a key prefix and a name are
// not bounded so that their sum stays under the cap).
func (v rval) invalidation() (inv invalidated, ok bool) {
	if v.typ != '>' || len(v.arr) != 2 || v.arr[0].str != "invalidate" {
		return inv, false
	}
	if v.arr[1].null {
		inv.all = true
		return inv, true
	}
	for _, k := range v.arr[1].arr {
		if k.long {
			inv.long = true
			continue
		}
		inv.keys = append(inv.keys, k.str)
	}
	return inv, true
}
