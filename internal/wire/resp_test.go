package wire

import (
	"bufio"
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
		{"*1\r\n:1\r\n", reply{}, true},
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
