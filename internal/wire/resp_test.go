package wire

import (
	"bufio"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSetGetSupported(t *testing.T) {
	tests := []struct {
		info string
		want bool
	}{
		{"# Server\r\nredis_version:7.0.15\r\n", true},
		{"# Server\r\nredis_version:7.2.4\r\nvalkey_version:8.0.1\r\n", true},
		{"# Server\r\nredis_version:6.2.14\r\n", false},
		{"# Server\r\nredis_version:\r\n", false},
		{"", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, setGetSupported(tt.info), "%q", tt.info)
	}
}

func TestEncoding(t *testing.T) {
	s := NewScript("return 1")
	assert.Equal(t, "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", s.Hash())
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"command", appendCommand(nil, []string{"SET", "k", "v", "NX", "PX", "100"}), "*6\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n$2\r\nNX\r\n$2\r\nPX\r\n$3\r\n100\r\n"},
		{"SET NX GET", appendSetGet(nil, []string{"SET", "k", "v", "NX", "PX", "100"}), "*7\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n$2\r\nNX\r\n$3\r\nGET\r\n$2\r\nPX\r\n$3\r\n100\r\n"},
		{"EVALSHA", appendScript(nil, false, s, []string{"a", "b"}, []string{"x"}), "*6\r\n$7\r\nEVALSHA\r\n$40\r\n" + s.Hash() + "\r\n$1\r\n2\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nx\r\n"},
		{"EVAL", appendScript(nil, true, s, []string{"a"}, nil), "*4\r\n$4\r\nEVAL\r\n$8\r\nreturn 1\r\n$1\r\n1\r\n$1\r\na\r\n"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, string(tt.got), tt.name)
	}
}

func TestReadReply(t *testing.T) {
	tests := []struct {
		in   string
		want reply
		err  bool
	}{
		{"+OK\r\n", reply{typ: '+', str: "OK"}, false},
		{"-WRONGTYPE x\r\n", reply{typ: '-', str: "WRONGTYPE x"}, false},
		{":-2\r\n", reply{typ: ':', num: -2}, false},
		{"$-1\r\n", reply{typ: '$', num: -1}, false},
		{"$3\r\nabc\r\n", reply{typ: '$', num: 3, str: "abc"}, false},
		{"$5000\r\n" + strings.Repeat("x", 5000) + "\r\n", reply{typ: '$', num: 5000}, false}, // read past, not kept
		{"$5000\r\n" + strings.Repeat("x", 5000) + "ZZ:1\r\n", reply{}, true},                 // out of step: not ended by CRLF
		{"*1\r\n:1\r\n", reply{typ: '*', num: 1, arr: []Result{{Type: ':', Int: 1}}}, false},
		{"*A\r\n", reply{}, true},
		{"$-2\r\n", reply{}, true},
		{":x\r\n", reply{}, true},
	}
	for _, tt := range tests {
		wc := &wireConn{rd: bufio.NewReaderSize(strings.NewReader(tt.in), readBuf)}
		got, err := wc.readReply()
		if tt.err {
			require.Error(t, err, "%q", tt.in)
			continue
		}
		require.NoError(t, err, "%q", tt.in)
		assert.Equal(t, tt.want, got, "%q", tt.in)
	}
}

func TestWants(t *testing.T) {
	rd := &round{want: ":"}
	assert.True(t, rd.wants(':', false))
	assert.True(t, rd.wants('-', false), "an error reply always fits")
	assert.False(t, rd.wants('$', false))
	assert.False(t, rd.wants('+', false))
	rd = &round{want: "+$", nxget: true}
	assert.True(t, rd.wants('+', false))
	assert.False(t, rd.wants('+', true), "SET NX GET answers a bulk string")
	assert.True(t, rd.wants('$', true))
	rd = &round{}
	assert.True(t, rd.wants('+', false))
	assert.False(t, rd.wants('*', false))
}

func TestReadArrayReply(t *testing.T) {
	long := strings.Repeat("y", 5000)
	huge := strings.Repeat("z", maxArrayBulk+1)
	tests := []struct {
		name string
		in   string
		want reply
		err  bool
	}{
		{"empty", "*0\r\n", reply{typ: '*', arr: []Result{}}, false},
		{"nil", "*-1\r\n", reply{typ: '*', num: -1}, false},
		{"every type", "*6\r\n+OK\r\n:-7\r\n$3\r\nabc\r\n$-1\r\n$0\r\n\r\n*-1\r\n", reply{typ: '*', num: 6, arr: []Result{
			{Type: '+', Str: "OK"}, {Type: ':', Int: -7}, {Type: '$', Str: "abc", Int: 3}, {Type: '$', Int: -1}, {Type: '$'}, {Type: '*', Int: -1},
		}}, false},
		{"nested", "*2\r\n*2\r\n:1\r\n*1\r\n$1\r\nx\r\n*0\r\n", reply{typ: '*', num: 2, arr: []Result{
			{Type: '*', Int: 2, Array: []Result{{Type: ':', Int: 1}, {Type: '*', Int: 1, Array: []Result{{Type: '$', Str: "x", Int: 1}}}}},
			{Type: '*', Array: []Result{}},
		}}, false},
		{"error inside", "*2\r\n-ERR inner\r\n:2\r\n", reply{typ: '*', num: 2, arr: []Result{
			{Type: '-', Str: "ERR inner", Err: ErrorReply("ERR inner")}, {Type: ':', Int: 2},
		}}, false},
		{"a value longer than a lock's, kept", "*1\r\n$5000\r\n" + long + "\r\n", reply{typ: '*', num: 1, arr: []Result{{Type: '$', Str: long, Int: 5000}}}, false},
		{"a value past the cap, read past", "*2\r\n$" + strconv.Itoa(len(huge)) + "\r\n" + huge + "\r\n:1\r\n", reply{typ: '*', num: 2, arr: []Result{{Type: '$', Int: int64(len(huge))}, {Type: ':', Int: 1}}}, false},
		{"short", "*2\r\n:1\r\n", reply{}, true},
		{"bad length", "*-2\r\n", reply{}, true},
		{"bad element", "*1\r\n!x\r\n", reply{}, true},
		{"bad bulk inside", "*1\r\n$3\r\nabcZZ\r\n", reply{}, true},
		{"too many", "*" + strconv.Itoa(maxArrayLen+1) + "\r\n", reply{}, true},
		{"too deep", strings.Repeat("*1\r\n", maxDepth+1) + ":1\r\n", reply{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wc := &wireConn{rd: bufio.NewReaderSize(strings.NewReader(tt.in), readBuf)}
			got, err := wc.readReply()
			if tt.err {
				require.Error(t, err)
				if tt.name != "short" { // the connection's end (EOF), which drops it too
					assert.ErrorIs(t, err, ErrProtocol)
				}
				assert.False(t, isTimeout(err), "an array cut short leaves the connection out of step: not a timeout")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Zero(t, wc.rd.Buffered(), "the whole reply is read")
		})
	}
	// A depth of maxDepth is fine.
	wc := &wireConn{rd: bufio.NewReaderSize(strings.NewReader(strings.Repeat("*1\r\n", maxDepth)+":1\r\n"), readBuf)}
	_, err := wc.readReply()
	require.NoError(t, err)
}

// TestArrayReplyWaitsWhole: an array reply whose elements are not all there when
// the deadline passes is not consumed (the next read starts at its first byte, as
// for any reply that fits the buffer); one too long for the buffer is read as it
// comes, and a deadline in its middle is an error that is not a timeout (the
// connection is dropped).
func TestArrayReplyWaitsWhole(t *testing.T) {
	whole := "*3\r\n:1\r\n$5\r\nhello\r\n*1\r\n-ERR x\r\n"
	for cut := 1; cut < len(whole); cut++ {
		r := &stallReader{parts: []string{whole[:cut], whole[cut:]}}
		wc := &wireConn{rd: bufio.NewReaderSize(r, readBuf)}
		_, err := wc.readReply()
		require.Error(t, err, "cut at %d", cut)
		require.True(t, isTimeout(err), "cut at %d: %v", cut, err)
		assert.False(t, wc.whole(), "cut at %d", cut)
		got, err := wc.readReply()
		require.NoError(t, err, "cut at %d", cut)
		assert.Equal(t, byte('*'), got.typ)
		require.Len(t, got.arr, 3)
		assert.Equal(t, "hello", got.arr[1].Str)
		assert.Equal(t, ErrorReply("ERR x"), got.arr[2].Array[0].Err)
	}
	big := "*2\r\n$9000\r\n" + strings.Repeat("b", 9000) + "\r\n:1\r\n"
	r := &stallReader{parts: []string{big[:readBuf+100], big[readBuf+100:]}}
	wc := &wireConn{rd: bufio.NewReaderSize(r, readBuf)}
	_, err := wc.readReply()
	require.ErrorIs(t, err, ErrProtocol)
	assert.False(t, isTimeout(err))
	r = &stallReader{parts: []string{big}}
	wc = &wireConn{rd: bufio.NewReaderSize(r, readBuf)}
	got, err := wc.readReply()
	require.NoError(t, err)
	assert.Len(t, got.arr[0].Str, 9000)
}

// stallReader gives its parts one read each, with a timeout between them.
type stallReader struct {
	parts   []string
	stalled bool
}

func (r *stallReader) Read(p []byte) (int, error) {
	if len(r.parts) == 0 {
		return 0, io.EOF
	}
	if !r.stalled && len(r.parts) > 0 && r.parts[0] == "" {
		r.parts = r.parts[1:]
	}
	if r.stalled {
		r.stalled = false
		return 0, os.ErrDeadlineExceeded
	}
	n := copy(p, r.parts[0])
	r.parts[0] = r.parts[0][n:]
	if r.parts[0] == "" {
		r.parts = r.parts[1:]
		r.stalled = true
	}
	return n, nil
}
