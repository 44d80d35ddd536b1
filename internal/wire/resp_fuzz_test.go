package wire

import (
	"bufio"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzReadReply feeds any bytes to the reply reader, whole and cut in two with a
// deadline between the halves. It must never panic; a reply read is read the
// same after a deadline in its middle (which consumed nothing, for a reply that
// fits the buffer); whole() agrees with what a read finds; and a reply read,
// encoded again, reads back the same. Its seeds (below and testdata/fuzz) run
// in every go test.
func FuzzReadReply(f *testing.F) {
	for _, s := range []string{
		"+OK\r\n", "-ERR x\r\n", ":42\r\n", "$-1\r\n", "$3\r\nabc\r\n", "*-1\r\n", "*0\r\n",
		"*2\r\n$1\r\na\r\n:1\r\n", "*1\r\n*1\r\n-NOSCRIPT x\r\n", "*6\r\n$2\r\nv1\r\n:900\r\n$1\r\n3\r\n$13\r\n1700000000000\r\n$0\r\n\r\n$1\r\n2\r\n",
		"*3\r\n:0\r\n:2\r\n:5\r\n", "*2\r\n:1\r\n", "*99999999999\r\n", strings.Repeat("*1\r\n", 12) + ":1\r\n",
		"*1\r\n$5000\r\n" + strings.Repeat("x", 5000) + "\r\n", "$1\r\nab\r\n", "*1\r\n$-7\r\n",
	} {
		f.Add([]byte(s), uint16(len(s)/2))
	}
	f.Fuzz(func(t *testing.T, in []byte, cut uint16) {
		whole := &wireConn{rd: bufio.NewReaderSize(strings.NewReader(string(in)), readBuf)}
		want, werr := whole.readReply()
		if werr != nil {
			require.False(t, isTimeout(werr), "no deadline, yet a timeout: %v", werr)
			return
		}
		// Cut in two, a deadline between: the same reply once the rest came.
		at := int(cut) % (len(in) + 1)
		parts := []string{string(in[:at]), string(in[at:])}
		split := &wireConn{rd: bufio.NewReaderSize(&stallReader{parts: parts}, readBuf)}
		for range 3 {
			got, err := split.readReply()
			if err == nil {
				require.Equal(t, want, got)
				break
			}
			require.True(t, isTimeout(err), "cut at %d: %v", at, err)
			require.False(t, split.whole())
		}
		// Encoded again, it reads back the same (when nothing was left unkept).
		if kept(want.typ, want.str, want.num, want.arr) {
			b := encodeReply(nil, Result{Type: want.typ, Str: want.str, Int: want.num, Array: want.arr})
			again := &wireConn{rd: bufio.NewReaderSize(strings.NewReader(string(b)), readBuf)}
			if len(b) <= readBuf {
				_, _ = again.rd.Peek(len(b))
				require.True(t, again.whole(), "%q", b)
			}
			got, err := again.readReply()
			require.NoError(t, err)
			require.Equal(t, want, got)
		}
	})
}

// kept reports whether no bulk string of a reply was read past.
func kept(typ byte, str string, n int64, arr []Result) bool {
	if typ == '$' && n > int64(len(str)) {
		return false
	}
	for _, e := range arr {
		if !kept(e.Type, e.Str, e.Int, e.Array) {
			return false
		}
	}
	return true
}

// encodeReply appends r as a master sends it.
func encodeReply(b []byte, r Result) []byte {
	b = append(b, r.Type)
	switch r.Type {
	case '+', '-':
		b = append(b, r.Str...)
	case ':':
		b = strconv.AppendInt(b, r.Int, 10)
	case '$':
		if r.Int < 0 {
			b = strconv.AppendInt(b, r.Int, 10)
			break
		}
		b = strconv.AppendInt(b, int64(len(r.Str)), 10)
		b = append(b, "\r\n"...)
		b = append(b, r.Str...)
	case '*':
		b = strconv.AppendInt(b, r.Int, 10)
		b = append(b, "\r\n"...)
		for _, e := range r.Array {
			b = encodeReply(b, e)
		}
		return b
	}
	return append(b, "\r\n"...)
}
