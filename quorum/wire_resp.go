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

// decodeReply maps the reply of cmd, whose first line is typ and line, to an
// outcome, reading the rest of the reply when there is one. For a SET NX GET that
// found the key held, holder is the value there. An error reply is a replyError
// (the connection stays in step); any other error means it is out of step.
func decodeReply(wc *wireConn, cmd wireCmd, typ byte, line []byte) (out Outcome, holder string, err error) {
	switch {
	case typ == '-' && cmd == wireSet && wc.setGet && hasPrefix(line, "WRONGTYPE"):
		// GET cannot read a key of another type; like plain SET NX, it was not set.
		return OutcomeForeign, "", nil
	case typ == '-':
		return OutcomeError, "", replyError(line)
	case cmd == wireSet && wc.setGet:
		// SET NX GET answers nil when it set the key, the old value when it did not.
		if typ == '$' {
			n, ok := parseInt(line)
			switch {
			case ok && n == -1:
				return OutcomeOK, "", nil
			case ok && n >= 0 && n <= maxValueLen:
				v, err := wc.readBulkBody(n)
				if err != nil {
					return OutcomeError, "", err
				}
				return OutcomeForeign, v, nil
			}
		}
	case cmd == wireSet:
		switch {
		case typ == '+' && string(line) == "OK":
			return OutcomeOK, "", nil
		case typ == '$' && string(line) == "-1":
			return OutcomeForeign, "", nil
		}
	default:
		if typ == ':' {
			if r, ok := parseInt(line); ok {
				return outcomeOf(r), "", nil
			}
		}
	}
	return OutcomeError, "", fmt.Errorf("%w %q", errProtocol, typ)
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
		b = appendArray(b, 6)
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
	b = appendArray(b, 6)
	b = appendBulk(b, "EVAL")
	if cmd == wireRelease {
		b = appendBulk(b, releaseLua)
	} else {
		b = appendBulk(b, extendLua)
	}
	return appendScriptArgs(b, cmd, key, value, str, num)
}

func appendScriptArgs(b []byte, cmd wireCmd, key, value, str string, num int64) []byte {
	b = appendBulk(b, "1")
	b = appendBulk(b, key)
	b = appendBulk(b, value)
	if cmd == wireRelease {
		return appendBulk(b, str)
	}
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

func appendBulkInt(b []byte, n int64) []byte {
	var tmp [20]byte
	d := strconv.AppendInt(tmp[:0], n, 10)
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(d)), 10)
	b = append(b, '\r', '\n')
	b = append(b, d...)
	return append(b, '\r', '\n')
}
