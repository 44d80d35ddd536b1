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
	"unsafe"

	"github.com/redlock/redlock/internal/wire"
)

// The read path of SCAN listings (Inspect, InspectStream, a Scanner): a raw
// RESP2 connection of its own per master, read without go-redis's objects. Per
// batch of keys it costs a master one SCAN and, in one MULTI/EXEC (atomic, as
// the listing script was), a GETRANGE 0 ValueReadCap-1 and a PTTL per key:
// about 2 µs of the master's CPU per key against 4-5 µs for list_read.lua
// (PERFORMANCE.md section 5). The next batch's SCAN goes out with the current
// batch's MULTI/EXEC: one round trip per batch. A key that needs more (a value
// of ValueReadCap bytes or more, whose length STRLEN gives; a key of another
// type, whose TYPE is asked) is read again by list_read.lua, atomically.
//
// The replies are read into two buffers reused from batch to batch; the
// records handed to put point into them (listRecord says so) and are valid
// until put returns.

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
		lc.out = appendRESP(lc.out, a...)
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
	getrangeTail = []byte("$1\r\n0\r\n$" + strconv.Itoa(len(strconv.Itoa(ValueReadCap-1))) + "\r\n" + strconv.Itoa(ValueReadCap-1) + "\r\n")
	pttlHead     = []byte("*2\r\n$4\r\nPTTL\r\n")
)

// appendReadKey appends GETRANGE key 0 ValueReadCap-1 and PTTL key, as
// appendRESP would.
func appendReadKey(b []byte, key string) []byte {
	b = appendRESPBulk(append(b, getrangeHead...), key)
	b = append(b, getrangeTail...)
	return appendRESPBulk(append(b, pttlHead...), key)
}

// appendRESP appends one command.
func appendRESP(b []byte, args ...string) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, '\r', '\n')
	for _, a := range args {
		b = appendRESPBulk(b, a)
	}
	return b
}

func appendRESPBulk(b []byte, s string) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, '\r', '\n')
	b = append(b, s...)
	return append(b, '\r', '\n')
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

// span is a piece of a batch buffer.
type span struct{ off, n int32 }

// scanBatch is the state of one master's SCAN pass on a listConn: the keys of
// the batch in flight, and the buffers that the records point into.
type scanBatch struct {
	keys    []byte // the key names of the batch, back to back
	spans   []span
	next    []byte // the next batch's key names, read while this one is decoded
	nspans  []span
	values  []byte
	vspans  []span   // the values of records, in values
	again   []string // keys to read with list_read.lua
	records []listRecord
}

// readSCAN reads a SCAN reply: the next cursor, the keys into b.next.
func (lc *listConn) readSCAN(b *scanBatch) (uint64, error) {
	b.next, b.nspans = b.next[:0], b.nspans[:0]
	if n, err := lc.header('*'); err != nil || n != 2 {
		return 0, firstErr(err, fmt.Errorf("%w: SCAN reply of %d elements", errListProtocol, n))
	}
	n, err := lc.header('$')
	if err != nil {
		return 0, err
	}
	var cur []byte
	if cur, _, err = lc.bulk(b.next, n, 20); err != nil {
		return 0, err
	}
	cursor, err := strconv.ParseUint(string(cur[len(b.next):]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: cursor", errListProtocol)
	}
	count, err := lc.header('*')
	if err != nil {
		return 0, err
	}
	for range count {
		n, err := lc.header('$')
		if err != nil {
			return 0, err
		}
		start := len(b.next)
		var kept bool
		if b.next, kept, err = lc.bulk(b.next, n, listKeyCap); err != nil {
			return 0, err
		}
		if kept {
			b.nspans = append(b.nspans, span{int32(start), int32(n)})
		}
	}
	return cursor, nil
}

// firstErr returns err, or other when err is nil.
func firstErr(err, other error) error {
	if err != nil {
		return err
	}
	return other
}

// scanPass runs one SCAN pass on master n under pattern, from cursor: a batch
// per step, each read in one MULTI/EXEC sent with the next SCAN. It calls put
// with each batch's records (valid until put returns) and returns the next
// cursor: 0 once the pass is over, else where it stopped after steps batches
// (steps <= 0: no limit). Each round trip has the listing's per-call deadline.
func (m *Manager) scanPass(ctx context.Context, n *node, cursor uint64, pattern string, steps int, put func([]listRecord)) (next uint64, err error) {
	timeout := m.inspectCallTimeout()
	if err := ctx.Err(); err != nil {
		return cursor, err
	}
	lc, reused, err := n.listConn(ctx, timeout)
	if err != nil {
		return cursor, err
	}
	next, err = lc.firstSCAN(ctx, cursor, pattern, timeout)
	if err != nil && reused && ctx.Err() == nil {
		// The master may have closed the idle connection (a restart, a
		// timeout): SCAN writes nothing, so it is tried again once on a new one.
		_ = lc.c.Close()
		if lc, err = dialList(ctx, n, timeout); err != nil {
			return cursor, err
		}
		next, err = lc.firstSCAN(ctx, cursor, pattern, timeout)
	}
	defer func() { n.putListConn(lc, err) }()
	if err != nil {
		return cursor, fmt.Errorf("SCAN: %w", err)
	}
	b := &lc.batch
	stop := context.AfterFunc(ctx, func() { _ = lc.c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	scanArgs := func(cur uint64) { lc.appendSCAN(cur, pattern) }
	for step := 1; ; step++ {
		b.keys, b.next = b.next, b.keys
		b.spans, b.nspans = b.nspans, b.spans
		// This batch's reads, and the next SCAN when the pass goes on.
		queued := 0
		lc.out = appendRESP(lc.out, "MULTI")
		for _, s := range b.spans {
			k := bstr(b.keys[s.off : s.off+s.n])
			if sideName(strings.TrimPrefix(k, m.cfg.prefix)) {
				continue
			}
			lc.out = appendReadKey(lc.out, k)
			queued++
		}
		lc.out = appendRESP(lc.out, "EXEC")
		more := next != 0 && (steps <= 0 || step < steps)
		if more {
			scanArgs(next)
		}
		_ = lc.c.SetDeadline(time.Now().Add(timeout))
		if err := lc.flush(); err != nil {
			return cursor, fmt.Errorf("read: %w", err)
		}
		if err := lc.readBatch(b, queued, m.cfg.prefix); err != nil {
			return cursor, fmt.Errorf("read: %w", err)
		}
		cursor = next
		if more {
			if next, err = lc.readSCAN(b); err != nil {
				return cursor, fmt.Errorf("SCAN: %w", err)
			}
		}
		put(b.records)
		if len(b.again) > 0 {
			var buf []listRecord
			if _, err := m.readKeys(ctx, n, 0, "", b.again, &buf, put); err != nil {
				return cursor, err
			}
		}
		if !more {
			return cursor, nil
		}
	}
}

// appendSCAN buffers a SCAN step from cursor.
func (lc *listConn) appendSCAN(cursor uint64, pattern string) {
	lc.out = appendRESP(lc.out, "SCAN", strconv.FormatUint(cursor, 10), "MATCH", pattern, "COUNT", strconv.Itoa(inspectBatch))
}

// firstSCAN sends a pass's first SCAN step alone and reads its reply.
func (lc *listConn) firstSCAN(ctx context.Context, cursor uint64, pattern string, timeout time.Duration) (uint64, error) {
	stop := context.AfterFunc(ctx, func() { _ = lc.c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	_ = lc.c.SetDeadline(time.Now().Add(timeout))
	lc.appendSCAN(cursor, pattern)
	if err := lc.flush(); err != nil {
		return 0, err
	}
	return lc.readSCAN(&lc.batch)
}

// readBatch reads the replies of a batch's MULTI/EXEC (queued keys, two
// commands each) into b.records, and the keys to read again into b.again.
func (lc *listConn) readBatch(b *scanBatch, queued int, prefix string) error {
	b.records, b.again, b.values = b.records[:0], b.again[:0], b.values[:0]
	for range 1 + 2*queued {
		if err := lc.readOK(); err != nil { // +OK, then +QUEUED
			return err
		}
	}
	n, err := lc.header('*')
	switch {
	case err != nil:
		return err
	case n != int64(2*queued):
		return fmt.Errorf("%w: EXEC of %d replies for %d commands", errListProtocol, n, 2*queued)
	}
	b.vspans = b.vspans[:0]
	for _, s := range b.spans {
		key := bstr(b.keys[s.off : s.off+s.n])
		if sideName(strings.TrimPrefix(key, prefix)) {
			continue
		}
		// GETRANGE: the value's first bytes, or WRONGTYPE.
		typ, l, err := lc.line()
		if err != nil {
			return err
		}
		val := span{off: int32(len(b.values))}
		wrongType := false
		switch typ {
		case '-':
			wrongType = true
		case '$':
			vn, ok := wire.ParseInt(l)
			if !ok || vn < 0 || vn > ValueReadCap {
				return fmt.Errorf("%w: GETRANGE of %q bytes", errListProtocol, l)
			}
			if b.values, _, err = lc.bulk(b.values, vn, ValueReadCap); err != nil {
				return err
			}
			val.n = int32(vn)
		default:
			return fmt.Errorf("%w: %q to GETRANGE", errListProtocol, typ)
		}
		pttl, err := lc.header(':')
		if err != nil {
			return err
		}
		name, ok := strings.CutPrefix(key, prefix)
		switch {
		case pttl == -2 || !ok: // no such key (any more)
		case wrongType || val.n == ValueReadCap:
			b.again = append(b.again, strings.Clone(key))
		default:
			b.records = append(b.records, listRecord{name: name, typ: "string", size: int64(val.n), pttl: max(pttl, -1)})
			b.vspans = append(b.vspans, val)
		}
	}
	// b.values no longer moves: the records point into it.
	for i, v := range b.vspans {
		b.records[i].value = bstr(b.values[v.off : v.off+v.n])
	}
	return nil
}

// bstr returns the bytes of b as a string without copying them: b must not
// change while the string is in use.
func bstr(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
