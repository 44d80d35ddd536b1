package wire

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzConnValue feeds any bytes to a Conn's reading of a RESP3 reply or push
// (a loss watch's tracking connection), up to a cap of limit bytes per bulk
// string. It must never panic, keep a bulk string longer than the cap, nor read
// past the reply: the bytes it read are, alone, read back as the same value,
// and one fewer is not enough. Where the pipes' reader (readReply) reads a
// reply, the Conn reads it too, as far, and the same; and where the Conn reads
// one, so did the reader it replaced (legacyValue, below), the same. Its seeds
// (below and testdata/fuzz) run in every go test.
func FuzzConnValue(f *testing.F) {
	for _, s := range []string{
		">2\r\n$10\r\ninvalidate\r\n*1\r\n$6\r\nlock:a\r\n", ">2\r\n$10\r\ninvalidate\r\n_\r\n",
		"$-1\r\n", "_\r\n", "-NOPERM x\r\n", ":0\r\n", "|1\r\n+a\r\n+b\r\n+OK\r\n", "%1\r\n+a\r\n:1\r\n",
		"*2\r\n$3\r\nabc\r\n*-1\r\n", "$-2\r\n", "*3\r\n:1\r\n",
	} {
		f.Add([]byte(s), uint16(16))
	}
	f.Fuzz(func(t *testing.T, in []byte, limit uint16) {
		c, read := valueConn(in)
		v, err := c.Value(int(limit))
		n := read()
		pc, pread := valueConn(in)
		r, rerr := pc.wc.readReply()
		if err != nil {
			require.True(t, errors.Is(err, ErrProtocol) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF), "%v", err)
			require.Error(t, rerr, "the pipes' reader read %q", in)
			return
		}
		keptWithin(t, v, int(limit))

		// No further than the reply: its bytes alone read the same, one fewer not.
		alone, _ := valueConn(in[:n])
		again, err := alone.Value(int(limit))
		require.NoError(t, err)
		require.Equal(t, v, again)
		short, _ := valueConn(in[:n-1])
		_, err = short.Value(int(limit))
		require.Error(t, err, "%d bytes read where %d were enough", n, n-1)

		if rerr == nil {
			require.Equal(t, pread(), n, "read as far as the pipes' reader")
			agrees(t, Result{Type: r.typ, Str: r.str, Int: r.num, Array: r.arr}, v, int(limit), 0)
		}
		old, err := legacyValue(bufio.NewReaderSize(bytes.NewReader(in), connBuf), int64(limit))
		require.NoError(t, err, "the reader replaced read nothing")
		require.Equal(t, old, v)
	})
}

// keptWithin checks that no bulk string of v is longer than limit.
func keptWithin(t *testing.T, v Value, limit int) {
	switch v.Type {
	case '$', '!', '=':
		require.LessOrEqual(t, len(v.Str), limit)
		if v.Long || v.Null {
			require.Empty(t, v.Str)
		}
	}
	for _, e := range v.Elems {
		keptWithin(t, e, limit)
	}
}

// agrees checks that v, read by a Conn, says what r, read by the pipes, does
// (nested depth deep): r's bulk strings are kept up to maxBulk bytes in a whole
// reply, maxArrayBulk in an array, v's up to limit.
func agrees(t *testing.T, r Result, v Value, limit, depth int) {
	require.Equal(t, r.Type, v.Type)
	switch r.Type {
	case '+', '-':
		require.Equal(t, r.Str, v.Str)
	case ':':
		n, ok := ParseInt([]byte(v.Str))
		require.True(t, ok)
		require.Equal(t, r.Int, n)
	case '$':
		keep := int64(maxArrayBulk)
		if depth == 0 {
			keep = maxBulk
		}
		switch {
		case r.Int < 0:
			require.True(t, v.Null)
		case r.Int > int64(limit):
			require.True(t, v.Long)
		case r.Int <= keep:
			require.Equal(t, r.Str, v.Str)
		default:
			require.Len(t, v.Str, int(r.Int))
		}
	case '*':
		require.Equal(t, r.Int < 0, v.Null)
		require.Len(t, v.Elems, len(r.Array))
		for i, e := range r.Array {
			agrees(t, e, v.Elems[i], limit, depth+1)
		}
	}
}
