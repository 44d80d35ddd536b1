package quorum

import (
	"fmt"
	"io"
	"strconv"
)

// RESP encoding and decoding of the wire fast path, without allocating where the
// hot path runs.

// maxValueLen bounds the value a SET NX GET may read back: lock values are at most
// 256 bytes; anything much longer is not a lock and is not read.
const maxValueLen = 4096

func hasPrefix(b []byte, p string) bool { return len(b) >= len(p) && string(b[:len(p)]) == p }

// parseInt parses a RESP integer without allocating.
func parseInt(b []byte) (int64, bool) {
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

// readLine reads one reply line and returns its type byte and its body (valid
// until the next read).
func (wc *wireConn) readLine() (byte, []byte, error) {
	line, err := wc.rd.ReadSlice('\n')
	if err != nil {
		return 0, nil, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return 0, nil, fmt.Errorf("%w: short line", errProtocol)
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
		return "", replyError(line)
	case typ != '$':
		return "", fmt.Errorf("%w %q", errProtocol, typ)
	}
	n, ok := parseInt(line)
	if !ok || n < 0 {
		return "", fmt.Errorf("%w: bulk length", errProtocol)
	}
	return wc.readBulkBody(n)
}

// readBulkBody reads the n bytes of a bulk string and its CRLF.
func (wc *wireConn) readBulkBody(n int64) (string, error) {
	data := make([]byte, n+2)
	if _, err := io.ReadFull(wc.rd, data); err != nil {
		return "", err
	}
	return string(data[:n]), nil
}

// readOK reads a simple-string reply; an error reply is a replyError.
func (wc *wireConn) readOK() error {
	typ, line, err := wc.readLine()
	switch {
	case err != nil:
		return err
	case typ == '-':
		return replyError(line)
	case typ != '+':
		return fmt.Errorf("%w %q", errProtocol, typ)
	}
	return nil
}

// appendWireCmd appends cmd as a RESP array.
func appendWireCmd(b []byte, cmd wireCmd, key, value, str string, num int64) []byte {
	switch cmd {
	case wireSet:
		b = appendArray(b, 6)
		b = appendBulk(b, "SET")
		b = appendBulk(b, key)
		b = appendBulk(b, value)
		b = appendBulk(b, "NX")
		b = appendBulk(b, "PX")
		return appendBulkInt(b, num)
	case wireRelease:
		b = appendArray(b, 7)
		b = appendBulk(b, "EVALSHA")
		b = appendBulk(b, releaseScript.Hash())
	default:
		b = appendArray(b, 6)
		b = appendBulk(b, "EVALSHA")
		b = appendBulk(b, extendScript.Hash())
	}
	return appendScriptArgs(b, cmd, key, value, str, num)
}

// appendSetGet appends SET key value NX GET PX ms.
func appendSetGet(b []byte, key, value string, num int64) []byte {
	b = appendArray(b, 7)
	b = appendBulk(b, "SET")
	b = appendBulk(b, key)
	b = appendBulk(b, value)
	b = appendBulk(b, "NX")
	b = appendBulk(b, "GET")
	b = appendBulk(b, "PX")
	return appendBulkInt(b, num)
}

// appendEval appends cmd's script with EVAL (after NOSCRIPT).
func appendEval(b []byte, cmd wireCmd, key, value, str string, num int64) []byte {
	if cmd == wireRelease {
		b = appendArray(b, 7)
		b = appendBulk(b, "EVAL")
		b = appendBulk(b, releaseLua)
	} else {
		b = appendArray(b, 6)
		b = appendBulk(b, "EVAL")
		b = appendBulk(b, extendLua)
	}
	return appendScriptArgs(b, cmd, key, value, str, num)
}

// appendScriptArgs appends the keys and arguments of cmd's script. The release
// names the lock's queue key too (derived from key, without allocating), so that
// it can wake only the head of a fair queue (release.lua).
func appendScriptArgs(b []byte, cmd wireCmd, key, value, str string, num int64) []byte {
	if cmd == wireRelease {
		b = appendBulk(b, "2")
		b = appendBulk(b, key)
		b = appendBulk2(b, key, queueSuffix)
		b = appendBulk(b, value)
		return appendBulk(b, str)
	}
	b = appendBulk(b, "1")
	b = appendBulk(b, key)
	b = appendBulk(b, value)
	return appendBulkInt(b, num)
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

// appendBulk2 appends s+t as one bulk string.
func appendBulk2(b []byte, s, t string) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(s)+len(t)), 10)
	b = append(b, '\r', '\n')
	b = append(b, s...)
	b = append(b, t...)
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
