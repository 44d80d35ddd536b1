package wire

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
)

// loopReader serves the same bytes forever: a connection whose master answers
// every command alike.
type loopReader struct {
	data []byte
	off  int
}

func (l *loopReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], l.data[l.off:])
		n += c
		l.off = (l.off + c) % len(l.data)
	}
	return n, nil
}

// BenchmarkReadReply reads the hot commands' replies: what the lock's rounds get.
//
//	go test ./internal/wire -run '^$' -bench ReadReply -benchmem
func BenchmarkReadReply(b *testing.B) {
	value := strings.Repeat("v", 64)
	for _, bc := range []struct{ name, reply string }{
		{"ok", "+OK\r\n"},
		{"int", ":1\r\n"},
		{"nil", "$-1\r\n"},
		{"bulk", "$64\r\n" + value + "\r\n"},
		{"error", "-NOSCRIPT No matching script\r\n"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			wc := &wireConn{rd: bufio.NewReaderSize(&loopReader{data: bytes.Repeat([]byte(bc.reply), 64)}, readBuf)}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := wc.readReply(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkConnValueInvalidation reads what a loss watch reads per change of a
// watched key: the invalidation push, then the reply of its GET (a lock value).
//
//	go test ./internal/wire -run '^$' -bench ConnValueInvalidation -benchmem
func BenchmarkConnValueInvalidation(b *testing.B) {
	value := `{"h":"host","p":1234,"t":"0123456789abcdef0123456789abcdef"}`
	in := ">2\r\n$10\r\ninvalidate\r\n*1\r\n$13\r\nlock:orders:7\r\n$60\r\n" + value + "\r\n"
	c := &Conn{wc: &wireConn{rd: bufio.NewReaderSize(&loopReader{data: []byte(in)}, connBuf)}}
	b.ReportAllocs()
	for b.Loop() {
		push, err := c.Value(512)
		if err != nil || len(push.Elems) != 2 || len(push.Elems[1].Elems) != 1 {
			b.Fatal(push, err)
		}
		if get, err := c.Value(512); err != nil || get.Str != value {
			b.Fatal(get, err)
		}
	}
}
