package wire

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzConnRead feeds any bytes to a Conn's reading of an array of bulk strings
// (a listing's SCAN step), each kept up to a cap of limit bytes. It must never
// panic nor keep a string longer than the cap, and it must read what the pipes'
// reader reads (the same parser of lines): where readReply reads an array of
// bulk strings, the Conn keeps the same strings, those up to the cap. Its seeds
// (below and testdata/fuzz) run in every go test.
func FuzzConnRead(f *testing.F) {
	f.Add([]byte("*2\r\n$1\r\n0\r\n*2\r\n$6\r\nlock:a\r\n$12\r\nlock:a:queue\r\n"), uint16(20))
	f.Add([]byte("*3\r\n$3\r\nabc\r\n$0\r\n\r\n$5\r\nabcde\r\n"), uint16(4))
	f.Add([]byte("*1\r\n$-1\r\n"), uint16(4))
	f.Add([]byte("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"), uint16(4))
	f.Add([]byte("*1\r\n$3\r\nab\r\n"), uint16(4))
	f.Fuzz(func(t *testing.T, in []byte, limit uint16) {
		c := &Conn{wc: &wireConn{rd: bufio.NewReaderSize(bytes.NewReader(in), connBuf)}}
		n, err := c.Header('*')
		if err != nil {
			var re ErrorReply
			require.True(t, errors.As(err, &re) || errors.Is(err, ErrProtocol) || errors.Is(err, io.EOF), "%v", err)
			return
		}
		var buf []byte
		var kept []bool
		failed := false
		for range min(n, 1<<16) {
			before := len(buf)
			var k bool
			buf, k, err = c.Bulk(buf, int(limit))
			if err != nil {
				failed = true
				break
			}
			require.LessOrEqual(t, len(buf)-before, int(limit))
			if !k {
				require.Equal(t, before, len(buf), "a string past the cap keeps nothing")
			}
			kept = append(kept, k)
		}
		// The pipes' reader on the same bytes.
		wc := &wireConn{rd: bufio.NewReaderSize(bytes.NewReader(in), connBuf)}
		want, werr := wc.readReply()
		if werr != nil || want.typ != '*' || want.num > 1<<16 {
			return
		}
		var wantBuf []byte
		for _, e := range want.arr {
			if e.Type != '$' || e.Int < 0 {
				require.True(t, failed, "the pipes' reader read %q where the Conn takes only bulk strings", e.Type)
				return
			}
			if e.Int <= int64(limit) && e.Int <= maxArrayBulk {
				wantBuf = append(wantBuf, e.Str...)
			}
		}
		require.False(t, failed, "the pipes' reader read it whole: %v", err)
		require.Len(t, kept, len(want.arr))
		if int(limit) <= maxArrayBulk {
			require.Equal(t, string(wantBuf), string(buf))
		}
	})
}
