package wire

import (
	"fmt"
	"io"
	"strconv"
)

// RESP encoding and decoding, without allocating where the hot path runs.

// maxBulk bounds the bulk string a reply may carry (a SET NX GET's value: lock
// values are at most 256 bytes); a longer one is read past and not kept.
const maxBulk = 4096

// ParseInt parses the digits of a RESP integer or length (an optional '-', then
// at most 18 decimal digits, so it never overflows) without allocating; false for
// anything else.
func ParseInt(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// reply is one reply of a hot command, read whole and copied out of the
// connection's buffer, so that it can be decoded after the reader's role passed on.
type reply struct {
	typ byte
	str string // a simple string, an error reply, or a bulk string's contents
	num int64  // an integer reply, or a bulk string's length (-1: nil)
}

// readReply reads one whole reply: a simple string, an error, an integer, or a
// bulk string (whose contents are kept up to maxBulk bytes; lock values are
// far shorter). Anything else leaves the connection out of step: an error. A
// deadline that passes before the whole reply is there consumes nothing
// (readLineSafe).
func (wc *wireConn) readReply() (reply, error) {
	typ, line, err := wc.readLineSafe()
	if err != nil {
		return reply{}, err
	}
	rp := reply{typ: typ}
	switch typ {
	case '+':
		if string(line) == "OK" {
			rp.str = "OK" // no allocation for the usual reply
		} else {
			rp.str = string(line)
		}
	case '-':
		rp.str = string(line)
	case ':', '$':
		n, ok := ParseInt(line)
		switch {
		case !ok || typ == '$' && n < -1:
			return reply{}, fmt.Errorf("%w: %q length", ErrProtocol, typ)
		case typ == '$' && n > maxBulk:
			// Not a lock value, and too long to keep: read past it (SET NX GET
			// on a key holding any long string is Foreign, holder unknown).
			// Unlike the rest of a reply, it is read as it comes: a deadline
			// in its middle leaves the connection out of step, so the error
			// is not a timeout and the connection is dropped.
			if _, err := wc.rd.Discard(int(n)); err != nil {
				return reply{}, fmt.Errorf("%w: a long bulk string cut short: %v", ErrProtocol, err)
			}
			if err := wc.readCRLF(); err != nil {
				return reply{}, err
			}
		case typ == '$' && n >= 0:
			if rp.str, err = wc.readBulkBody(n); err != nil {
				return reply{}, err
			}
		}
		rp.num = n
	default:
		return reply{}, fmt.Errorf("%w %q", ErrProtocol, typ)
	}
	return rp, nil
}

// readLine reads one reply line and returns its type byte and its body (valid
// until the next read).
func (wc *wireConn) readLine() (byte, []byte, error) {
	line, err := wc.rd.ReadSlice('\n')
	if err != nil {
		return 0, nil, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return 0, nil, fmt.Errorf("%w: short line", ErrProtocol)
	}
	return line[0], line[1 : len(line)-2], nil
}

// readBulk reads a bulk string reply (INFO) into a new string; an error reply is a
// replyError.
func (wc *wireConn) readBulk() (string, error) {
	typ, line, err := wc.readLine()
	switch {
	case err != nil:
		return "", err
	case typ == '-':
		return "", ErrorReply(line)
	case typ != '$':
		return "", fmt.Errorf("%w %q", ErrProtocol, typ)
	}
	n, ok := ParseInt(line)
	if !ok || n < 0 {
		return "", fmt.Errorf("%w: bulk length", ErrProtocol)
	}
	return wc.readBulkBody(n)
}

// readBulkBody reads the n bytes of a bulk string and its CRLF; anything else
// than CRLF after them means the connection is out of step.
func (wc *wireConn) readBulkBody(n int64) (string, error) {
	data := make([]byte, n+2)
	if _, err := io.ReadFull(wc.rd, data); err != nil {
		return "", err
	}
	if data[n] != '\r' || data[n+1] != '\n' {
		return "", fmt.Errorf("%w: a bulk string not ended by CRLF", ErrProtocol)
	}
	return string(data[:n]), nil
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

// readOK reads a simple-string reply; an error reply is a replyError.
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

// AppendCommand appends args as a RESP array of bulk strings: a command as a
// client sends it.
func AppendCommand(b []byte, args ...string) []byte { return appendCommand(b, args) }

// AppendBulk appends s as a RESP bulk string.
func AppendBulk(b []byte, s string) []byte { return appendBulk(b, s) }

// appendCommand appends args as a RESP array.
func appendCommand(b []byte, args []string) []byte {
	b = appendArray(b, len(args))
	for _, a := range args {
		b = appendBulk(b, a)
	}
	return b
}

// appendScript appends s's call over keys and args: EVALSHA, or EVAL with the
// script's body (after NOSCRIPT).
func appendScript(b []byte, eval bool, s *Script, keys, args []string) []byte {
	b = appendArray(b, 3+len(keys)+len(args))
	if eval {
		b = appendBulk(b, "EVAL")
		b = appendBulk(b, s.src)
	} else {
		b = appendBulk(b, "EVALSHA")
		b = appendBulk(b, s.sha)
	}
	b = appendBulkInt(b, int64(len(keys)))
	for _, k := range keys {
		b = appendBulk(b, k)
	}
	for _, a := range args {
		b = appendBulk(b, a)
	}
	return b
}

// appendSetGet appends args (SET key value NX PX ms) with GET before PX.
func appendSetGet(b []byte, args []string) []byte {
	b = appendArray(b, len(args)+1)
	for i, a := range args {
		if i == len(args)-2 {
			b = appendBulk(b, "GET")
		}
		b = appendBulk(b, a)
	}
	return b
}

func appendArray(b []byte, n int) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\r', '\n')
}

func appendBulk(b []byte, s string) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, '\r', '\n')
	b = append(b, s...)
	return append(b, '\r', '\n')
}

func appendBulkInt(b []byte, n int64) []byte {
	var tmp [20]byte
	d := strconv.AppendInt(tmp[:0], n, 10)
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(d)), 10)
	b = append(b, '\r', '\n')
	b = append(b, d...)
	return append(b, '\r', '\n')
}
