package wire

import (
	"errors"
	"fmt"
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

// maxArrayBulk bounds a bulk string kept inside an array reply (a script's read:
// an election's record, a listing's records); a longer one is read past and not
// kept, like a long bulk string outside an array.
const maxArrayBulk = 1 << 20

// maxArrayLen bounds the elements of an array reply, and maxDepth how deep arrays
// nest: a reply past either is taken as out of step.
const (
	maxArrayLen = 1 << 20
	maxDepth    = 8
)

// reply is one reply, read whole and copied out of the connection's buffer, so
// that it can be decoded after the reader's role passed on.
type reply struct {
	typ byte
	str string   // a simple string, an error reply, or a bulk string's contents
	num int64    // an integer reply, a bulk string's length (-1: nil), or an array's (-1: nil)
	arr []Result // an array's elements
}

// readReply reads one whole reply: a simple string, an error, an integer, a
// bulk string (whose contents are kept up to maxBulk bytes; lock values are
// far shorter), or an array of those (readElem). Anything else leaves the
// connection out of step: an error. A deadline that passes before the whole
// reply is there consumes nothing (readLineSafe), unless the reply is too long
// for the buffer: then it is read as it comes, and a deadline in its middle is
// an error that is not a timeout (the connection is out of step).
func (wc *wireConn) readReply() (reply, error) {
	typ, line, err := wc.readLineSafe()
	if err != nil {
		return reply{}, err
	}
	// The usual replies of the hot commands first, without parse's copying.
	switch typ {
	case '+':
		if string(line) == "OK" {
			return reply{typ: '+', str: "OK"}, nil
		}
	case ':':
		if n, ok := ParseInt(line); ok {
			return reply{typ: ':', num: n}, nil
		}
	case '$':
		if len(line) == 2 && line[0] == '-' && line[1] == '1' {
			return reply{typ: '$', num: -1}, nil
		}
	}
	r, err := wc.parse(typ, line, 0)
	if err != nil {
		return reply{}, err
	}
	return reply{typ: r.Type, str: r.Str, num: r.Int, arr: r.Array}, nil
}

// bulkContents reads the contents of a bulk string of length n (-1: nil, "") and
// its CRLF. Longer than keep, it is read past as it comes and not kept: a
// deadline in its middle leaves the connection out of step, so the error is not
// a timeout and the connection is dropped.
func (wc *wireConn) bulkContents(n, keep int64) (string, error) {
	switch {
	case n < 0:
		return "", nil
	case n <= keep:
		return wc.readBulkBody(n)
	}
	return "", wc.skipBulk(n)
}

// readArray reads the n elements of an array reply whose first line was read
// (-1: a nil array, nil), nested depth deep. An error reply inside is an element
// (Type '-', Err an ErrorReply), not an error. Any error leaves the connection
// out of step, and is never a timeout.
func (wc *wireConn) readArray(n int64, depth int) ([]Result, error) {
	switch {
	case n > maxArrayLen:
		return nil, fmt.Errorf("%w: an array of %d elements", ErrProtocol, n)
	case depth > maxDepth:
		return nil, fmt.Errorf("%w: arrays nested deeper than %d", ErrProtocol, maxDepth)
	case n < 0:
		return nil, nil
	}
	out := make([]Result, 0, min(n, 64))
	for range n {
		e, err := wc.readElem(depth)
		if err != nil {
			if !errors.Is(err, ErrProtocol) {
				err = fmt.Errorf("%w: an array cut short: %v", ErrProtocol, err)
			}
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// readElem reads one element of an array reply nested depth deep.
func (wc *wireConn) readElem(depth int) (Result, error) {
	typ, line, err := wc.readLine()
	if err != nil {
		return Result{}, err
	}
	return wc.parse(typ, line, depth)
}

// parse decodes the reply whose first line (type and body) was read, nested
// depth deep (0: a whole reply), and reads the rest of it. A bulk string is kept
// up to maxBulk bytes in a whole reply (a lock value; a long one is not: SET NX
// GET on a key holding any long string is Foreign, holder unknown), maxArrayBulk
// in an array. An error reply inside an array has its Err set.
func (wc *wireConn) parse(typ byte, line []byte, depth int) (Result, error) {
	r := Result{Type: typ}
	var err error
	switch typ {
	case '+':
		if string(line) == "OK" {
			r.Str = "OK" // no allocation for the usual reply
		} else {
			r.Str = string(line)
		}
	case '-':
		r.Str = string(line)
		if depth > 0 {
			r.Err = ErrorReply(r.Str)
		}
	case ':', '$', '*':
		n, ok := ParseInt(line)
		if !ok || n < -1 && typ != ':' {
			return Result{}, fmt.Errorf("%w: %q length", ErrProtocol, typ)
		}
		r.Int = n
		switch {
		case typ == '$' && depth == 0:
			r.Str, err = wc.bulkContents(n, maxBulk)
		case typ == '$':
			r.Str, err = wc.bulkContents(n, maxArrayBulk)
		case typ == '*':
			r.Array, err = wc.readArray(n, depth+1)
		}
		if err != nil {
			return Result{}, err
		}
	default:
		return Result{}, fmt.Errorf("%w %q", ErrProtocol, typ)
	}
	return r, nil
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
