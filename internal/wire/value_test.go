package wire

import (
	"bufio"
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// valueConn returns a Conn reading in, and a function telling how many of its
// bytes were read.
func valueConn(in []byte) (*Conn, func() int) {
	br := bytes.NewReader(in)
	c := &Conn{wc: &wireConn{rd: bufio.NewReaderSize(br, connBuf)}}
	return c, func() int { return len(in) - br.Len() - c.wc.rd.Buffered() }
}

// A tracking connection's replies and pushes read as a Value, each whole and no
// further (a reply after it reads next), up to a cap of 10 bytes: error replies as values, attributes
// read past, maps flattened, a value longer than the cap read past and marked,
// hostile bytes kept as sent.
func TestConnValueReadsRESP3(t *testing.T) {
	str := func(typ byte, s string) Value { return Value{Type: typ, Str: s} }
	long := Value{Type: '$', Long: true}
	for _, tc := range []struct {
		name, in string
		want     Value
	}{
		{"ok", "+OK\r\n", str('+', "OK")},
		{"error reply", "-NOPERM no\r\n", str('-', "NOPERM no")},
		{"busy", "-BUSY Redis is busy\r\n", str('-', "BUSY Redis is busy")},
		{"integer", ":0\r\n", str(':', "0")},
		{"double", ",3.5\r\n", str(',', "3.5")},
		{"big number", "(123456789012345678901234567890\r\n", str('(', "123456789012345678901234567890")},
		{"boolean", "#t\r\n", str('#', "t")},
		{"resp3 null", "_\r\n", Value{Type: '_', Null: true}},
		{"nil bulk", "$-1\r\n", Value{Type: '$', Null: true}},
		{"nil array", "*-1\r\n", Value{Type: '*', Null: true}},
		{"bulk", "$5\r\nv\x1b[2J\r\n", str('$', "v\x1b[2J")},
		{"empty bulk", "$0\r\n\r\n", str('$', "")},
		{"bulk at the cap", "$10\r\n" + strings.Repeat("x", 10) + "\r\n", str('$', strings.Repeat("x", 10))},
		{"bulk past the cap", "$11\r\n" + strings.Repeat("x", 11) + "\r\n", long},
		{"verbatim", "=8\r\ntxt:abcd\r\n", str('=', "txt:abcd")},
		{"bulk error", "!3\r\nERR\r\n", str('!', "ERR")},
		{"invalidate", ">2\r\n$10\r\ninvalidate\r\n*2\r\n$6\r\nlock:a\r\n$11\r\n" + strings.Repeat("k", 11) + "\r\n",
			Value{Type: '>', Elems: []Value{str('$', "invalidate"), {Type: '*', Elems: []Value{str('$', "lock:a"), long}}}}},
		{"invalidate all", ">2\r\n$10\r\ninvalidate\r\n_\r\n",
			Value{Type: '>', Elems: []Value{str('$', "invalidate"), {Type: '_', Null: true}}}},
		{"map flattened", "%2\r\n+a\r\n:1\r\n+b\r\n*0\r\n",
			Value{Type: '%', Elems: []Value{str('+', "a"), str(':', "1"), str('+', "b"), {Type: '*'}}}},
		{"set", "~1\r\n+x\r\n", Value{Type: '~', Elems: []Value{str('+', "x")}}},
		{"attributes read past", "|1\r\n+ttl\r\n|1\r\n+a\r\n+b\r\n:3\r\n+OK\r\n", str('+', "OK")},
		{"attribute inside an array", "*2\r\n|1\r\n+k\r\n+v\r\n:1\r\n:2\r\n",
			Value{Type: '*', Elems: []Value{str(':', "1"), str(':', "2")}}},
		{"nested 8 deep", strings.Repeat("*1\r\n", 8) + ":1\r\n", nest(8, str(':', "1"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in + "+NEXT\r\n"
			c, read := valueConn([]byte(in))
			v, err := c.Value(10)
			require.NoError(t, err)
			assert.Equal(t, tc.want, v)
			assert.Equal(t, len(tc.in), read(), "read no further than the value")
			next, err := c.Value(10)
			require.NoError(t, err)
			assert.Equal(t, str('+', "NEXT"), next)
		})
	}
}

// nest returns v inside depth arrays of one element.
func nest(depth int, v Value) Value {
	for range depth {
		v = Value{Type: '*', Elems: []Value{v}}
	}
	return v
}

// Replies that do not parse are ErrProtocol (the connection is dropped and
// dialled again), never a value: nothing a malformed push says is trusted.
func TestConnValueRefusesMalformedReplies(t *testing.T) {
	for _, tc := range []struct{ name, in string }{
		{"unknown type", "?x\r\n"},
		{"bulk length", "$x\r\n"},
		{"bulk length below -1", "$-2\r\n"},
		{"bulk not ended by CRLF", "$2\r\nabc\r\n"},
		{"long bulk not ended by CRLF", "$11\r\n" + strings.Repeat("x", 12) + "\r\n"},
		{"array length", "*1x\r\n"},
		{"array length below -1", "*-2\r\n"},
		{"push too long", ">1048577\r\n"},
		{"nested 9 deep", strings.Repeat("*1\r\n", 9) + ":1\r\n"},
		{"attribute nested 9 deep", strings.Repeat("|1\r\n", 9) + "+k\r\n"},
		{"no CR", "+OK\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := valueConn([]byte(tc.in))
			_, err := c.Value(10)
			require.ErrorIs(t, err, ErrProtocol)
		})
	}
}

// A push cut short is an error (the connection broke), never a value.
func TestConnValueCutShort(t *testing.T) {
	in := ">2\r\n$10\r\ninvalidate\r\n*2\r\n$6\r\nlock:a\r\n$11\r\n" + strings.Repeat("k", 11) + "\r\n"
	for cut := range len(in) {
		c, _ := valueConn([]byte(in[:cut]))
		_, err := c.Value(10)
		require.Error(t, err, "cut at %d", cut)
	}
}
