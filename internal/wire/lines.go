package wire

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
)

// The reading of reply lines and bulk strings: one parser of RESP lines, shared
// by the pipes' replies (resp.go), their handshake (dial.go) and a Conn's long
// replies (conn.go).

// maxConnBulk bounds the bulk string a Conn reads or reads past (Redis's own
// proto-max-bulk-len): a longer one is a reply out of step. It also bounds the
// bulk string of INFO, read whole at the handshake.
const maxConnBulk = 512 << 20

// readLine reads one reply line and returns its type byte and its body (valid
// until the next read). A line longer than the read buffer is out of step.
func (wc *wireConn) readLine() (byte, []byte, error) {
	line, err := wc.rd.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return 0, nil, fmt.Errorf("%w: a line of more than %d bytes", ErrProtocol, wc.rd.Size())
		}
		return 0, nil, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return 0, nil, fmt.Errorf("%w: short line", ErrProtocol)
	}
	return line[0], line[1 : len(line)-2], nil
}

// header reads the first line of a reply of type want ('*', '$' or ':') and
// returns its number: an array's or a bulk string's length (-1: nil), or an
// integer. An error reply is an ErrorReply and leaves the connection in step;
// another type, or a number that does not parse, is ErrProtocol.
func (wc *wireConn) header(want byte) (int64, error) {
	typ, line, err := wc.readLine()
	switch {
	case err != nil:
		return 0, err
	case typ == '-':
		return 0, ErrorReply(line)
	case typ != want:
		return 0, fmt.Errorf("%w %q where %q was due", ErrProtocol, typ, want)
	}
	n, ok := ParseInt(line)
	if !ok || n < -1 && want != ':' {
		return 0, fmt.Errorf("%w: %q length", ErrProtocol, want)
	}
	return n, nil
}

// readBulk reads a bulk string reply (INFO) into a new string; an error reply is
// an ErrorReply.
func (wc *wireConn) readBulk() (string, error) {
	n, err := wc.header('$')
	switch {
	case err != nil:
		return "", err
	case n < 0 || n > maxConnBulk:
		return "", fmt.Errorf("%w: a bulk string of %d bytes", ErrProtocol, n)
	}
	return wc.readBulkBody(n)
}

// readBulkBody reads the n bytes of a bulk string and its CRLF into a new
// string; anything else than CRLF after them means the connection is out of
// step.
func (wc *wireConn) readBulkBody(n int64) (string, error) {
	b, _, err := wc.bulkInto(make([]byte, 0, n+2), n, int(n))
	return string(b), err
}

// bulkString reads the n bytes of a bulk string whose first line was read, and
// its CRLF, into a new string: straight from the read buffer when they fit it
// (one allocation, none for the usual words: intern), else as readBulkBody.
// Any error leaves the connection out of step.
func (wc *wireConn) bulkString(n int64) (string, error) {
	if n+2 > int64(wc.rd.Size()) {
		return wc.readBulkBody(n)
	}
	b, err := wc.rd.Peek(int(n) + 2)
	if err != nil {
		return "", err
	}
	if b[n] != '\r' || b[n+1] != '\n' {
		return "", fmt.Errorf("%w: a bulk string not ended by CRLF", ErrProtocol)
	}
	s := intern(b[:n])
	_, err = wc.rd.Discard(int(n) + 2)
	return s, err
}

// bulkInto appends the n bytes of a bulk string whose first line was read to
// dst, read from the connection's buffer straight into dst, and reads its CRLF.
// Longer than limit, it is read past and nothing is kept (kept false). A read
// error (a deadline) in the middle leaves the connection out of step; it is
// returned as it is.
func (wc *wireConn) bulkInto(dst []byte, n int64, limit int) (out []byte, kept bool, err error) {
	if n > int64(limit) {
		return dst, false, wc.skipBulk(n)
	}
	start, end := len(dst), len(dst)+int(n)
	dst = slices.Grow(dst, int(n)+2)[:end+2]
	if _, err := io.ReadFull(wc.rd, dst[start:]); err != nil {
		return dst[:start], false, err
	}
	if dst[end] != '\r' || dst[end+1] != '\n' {
		return dst[:start], false, fmt.Errorf("%w: a bulk string not ended by CRLF", ErrProtocol)
	}
	return dst[:end], true, nil
}

// skipBulk reads past the n bytes of a bulk string and its CRLF, keeping
// nothing; any error leaves the connection out of step.
func (wc *wireConn) skipBulk(n int64) error {
	if _, err := wc.rd.Discard(int(n)); err != nil {
		return fmt.Errorf("%w: a long bulk string cut short: %v", ErrProtocol, err)
	}
	return wc.readCRLF()
}

// readCRLF reads the CRLF that ends a bulk string; anything else is a reply out
// of step (the connection is dropped).
func (wc *wireConn) readCRLF() error {
	cr, err := wc.rd.ReadByte()
	if err != nil {
		return fmt.Errorf("%w: a long bulk string cut short: %v", ErrProtocol, err)
	}
	lf, err := wc.rd.ReadByte()
	if err != nil {
		return fmt.Errorf("%w: a long bulk string cut short: %v", ErrProtocol, err)
	}
	if cr != '\r' || lf != '\n' {
		return fmt.Errorf("%w: a bulk string not ended by CRLF", ErrProtocol)
	}
	return nil
}

// readOK reads a simple-string reply; an error reply is an ErrorReply.
func (wc *wireConn) readOK() error {
	typ, line, err := wc.readLine()
	switch {
	case err != nil:
		return err
	case typ == '-':
		return ErrorReply(line)
	case typ != '+':
		return fmt.Errorf("%w %q", ErrProtocol, typ)
	}
	return nil
}
