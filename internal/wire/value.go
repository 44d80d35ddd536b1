package wire

import (
	"fmt"
	"time"
)

// The reading of RESP3 replies and pushes on a Conn (a loss watch's tracking
// connection: HELLO 3, CLIENT TRACKING ON), on the same parser of lines and
// bulk strings as every other read (lines.go).

// Value is one RESP2 or RESP3 reply or push, as (*Conn).Value reads it: copied
// out of the connection's buffer, read only as far as a caller deciding on a
// lock needs it. Its strings are the master's bytes as sent, unchecked and
// unescaped: hostile until proven otherwise.
type Value struct {
	// Type is the reply's RESP type byte: '+', '-', ':', ',', '(', '#', '_',
	// '$', '!', '=', '*', '~', '>' or '%'; never '|' (an attribute is read
	// past, and the value it describes returned).
	Type byte
	// Null: a RESP3 null ('_'), or a RESP2 nil bulk string or array (length -1).
	Null bool
	// Long: a bulk string (or bulk error, or verbatim string) longer than the
	// reader's limit, read past: Str is empty, and nothing tells what it held.
	Long bool
	// Str is a simple string's, an error's or a number's text as sent (not
	// parsed), or a bulk string's contents (a verbatim string's with its
	// format prefix).
	Str string
	// Elems are an array's, a set's or a push's elements in order, or a map's
	// keys and values in turn (flattened: 2n elements for n pairs).
	Elems []Value
}

// Value reads one reply or push, RESP2 or RESP3, whole and no further: an
// error reply is a Value of Type '-' (not an error), an attribute is read past,
// a map is flattened, and a bulk string longer than limit bytes is read past
// and marked Long (of any length: a hostile value of gigabytes costs a read,
// never memory). Aggregates nest at most 8 deep and hold at most 2^20
// elements (pairs, for a map or an attribute); past that, or a type or length
// that does not parse, or a bulk string not ended by CRLF (ErrProtocol), or a
// broken connection, the error leaves the Conn out of step: close it. Nothing
// read is checked beyond its framing: a number's text is as sent.
//
// Value may run in one goroutine while another writes (Send, SendBy): a
// tracking connection's pushes come in at any time.
func (c *Conn) Value(limit int) (Value, error) { return c.wc.readValue(limit, 0) }

// SendBy writes b (commands, encoded as AppendCommand does) whole, failing
// once deadline passes; it sets the write deadline only, so a read waiting
// in another goroutine (Value) is left as it is. A write cut short leaves the
// Conn out of step.
func (c *Conn) SendBy(b []byte, deadline time.Time) error {
	_ = c.wc.c.SetWriteDeadline(deadline)
	return c.Send(b)
}

// readValue reads one value nested depth deep (0: a whole reply), and the
// attributes before it.
func (wc *wireConn) readValue(limit, depth int) (Value, error) {
	for {
		typ, line, err := wc.readLine()
		if err != nil {
			return Value{}, err
		}
		if typ != '|' {
			return wc.value(typ, line, limit, depth)
		}
		// An attribute (n pairs) describes the value that follows it: read past.
		n, err := valueLen(typ, line, depth)
		switch {
		case err != nil:
			return Value{}, err
		case n < 0:
			return Value{}, fmt.Errorf("%w: a nil attribute", ErrProtocol)
		}
		for range 2 * n {
			if _, err := wc.readValue(limit, depth+1); err != nil {
				return Value{}, err
			}
		}
	}
}

// value decodes the value whose first line (type and body) was read, and reads
// the rest of it.
func (wc *wireConn) value(typ byte, line []byte, limit, depth int) (Value, error) {
	v := Value{Type: typ}
	switch typ {
	case '+', '-', ':', ',', '(', '#':
		v.Str = intern(line)
	case '_':
		v.Null = true
	case '$', '!', '=':
		n, ok := ParseInt(line)
		switch {
		case !ok || n < -1:
			return Value{}, fmt.Errorf("%w: %q length", ErrProtocol, typ)
		case n == -1:
			v.Null = true
		case n > int64(limit):
			v.Long = true
			return v, wc.skipBulk(n)
		default:
			var err error
			v.Str, err = wc.bulkString(n)
			return v, err
		}
	case '*', '~', '>', '%':
		n, err := valueLen(typ, line, depth)
		switch {
		case err != nil:
			return Value{}, err
		case n < 0:
			v.Null = true
			return v, nil
		case typ == '%':
			n *= 2
		}
		if n > 0 {
			v.Elems = make([]Value, 0, min(n, 64))
		}
		for range n {
			e, err := wc.readValue(limit, depth+1)
			if err != nil {
				return Value{}, err
			}
			v.Elems = append(v.Elems, e)
		}
	default:
		return Value{}, fmt.Errorf("%w %q", ErrProtocol, typ)
	}
	return v, nil
}

// valueLen parses the length of an aggregate (an array, set, push, map or
// attribute) nested depth deep: -1 (nil) up to maxArrayLen, no deeper than
// maxDepth.
func valueLen(typ byte, line []byte, depth int) (int, error) {
	n, ok := ParseInt(line)
	switch {
	case !ok || n < -1:
		return 0, fmt.Errorf("%w: %q length", ErrProtocol, typ)
	case n > maxArrayLen:
		return 0, fmt.Errorf("%w: an aggregate of %d elements", ErrProtocol, n)
	case depth >= maxDepth:
		return 0, fmt.Errorf("%w: aggregates nested deeper than %d", ErrProtocol, maxDepth)
	}
	return int(n), nil
}

// intern returns line as a string, without allocating for the usual short
// replies of a tracking connection.
func intern(line []byte) string {
	switch string(line) {
	case "OK":
		return "OK"
	case "PONG":
		return "PONG"
	case "0":
		return "0"
	case "1":
		return "1"
	case "invalidate":
		return "invalidate"
	}
	return string(line)
}
