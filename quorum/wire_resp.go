package quorum

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// RESP encoding and decoding of the wire fast path, without allocating where the
// hot path runs.

// maxValueLen bounds the value a SET NX GET may read back: lock values are at most
// 256 bytes; anything much longer is not a lock and is not read.
const maxValueLen = 4096

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

// reply is one reply of a hot command, read whole and copied out of the
// connection's buffer, so that it can be decoded after the reader's role passed on.
type reply struct {
	typ  byte
	ok   bool   // +OK
	err  string // an error reply
	num  int64  // an integer reply, or a bulk string's length (-1: nil)
	body string // a bulk string's contents
}

// readReply reads one whole reply: a simple string, an error, an integer, or a
// bulk string (whose contents are kept up to maxValueLen bytes; lock values are
// far shorter). Anything else leaves the connection out of step: an error. A
// deadline that passes before the whole reply is there consumes nothing
// (readLineSafe).
func (wc *wireConn) readReply() (reply, error) {
	typ, line, err := wc.readLineSafe()
	if err != nil {
		return reply{}, err
	}
	rp := reply{typ: typ}
	switch typ {
	case '+':
		rp.ok = string(line) == "OK"
	case '-':
		rp.err = string(line)
	case ':', '$':
		n, ok := parseInt(line)
		switch {
		case !ok || typ == '$' && n < -1:
			return reply{}, fmt.Errorf("%w: %q length", errProtocol, typ)
		case typ == '$' && n > maxValueLen:
			// Not a lock value, and too long to keep: read past it (SET NX GET
			// on a key holding any long string is Foreign, holder unknown).
			// Unlike the rest of a reply, it is read as it comes: a deadline
			// in its middle leaves the connection out of step, so the error
			// is not a timeout and the connection is dropped.
			if _, err := wc.rd.Discard(int(n) + 2); err != nil {
				return reply{}, fmt.Errorf("%w: a long bulk string cut short: %v", errProtocol, err)
			}
		case typ == '$' && n >= 0:
			if rp.body, err = wc.readBulkBody(n); err != nil {
				return reply{}, err
			}
		}
		rp.num = n
	default:
		return reply{}, fmt.Errorf("%w %q", errProtocol, typ)
	}
	return rp, nil
}

// decodeReply maps the reply of cmd to an outcome. setGet tells whether the
// command was SET NX GET; for one that found the key held, holder is the value
// there. An error reply is a replyError (the connection stays in step); any other
// error is a reply of the wrong type, and means it is out of step.
func decodeReply(setGet bool, cmd wireCmd, rp reply) (out Outcome, holder string, err error) {
	switch {
	case rp.typ == '-' && cmd == wireSet && setGet && strings.HasPrefix(rp.err, "WRONGTYPE"):
		// GET cannot read a key of another type; like plain SET NX, it was not set.
		return OutcomeForeign, "", nil
	case rp.typ == '-':
		return OutcomeError, "", replyError(rp.err)
	case cmd == wireSet && setGet:
		// SET NX GET answers nil when it set the key, the old value when it did not.
		if rp.typ == '$' {
			if rp.num == -1 {
				return OutcomeOK, "", nil
			}
			return OutcomeForeign, rp.body, nil
		}
	case cmd == wireSet:
		switch {
		case rp.typ == '+' && rp.ok:
			return OutcomeOK, "", nil
		case rp.typ == '$' && rp.num == -1:
			return OutcomeForeign, "", nil
		}
	case cmd == wireFair:
		// 1: acquired; 0: the key is held; -2: another waiter is ahead.
		if rp.typ == ':' {
			if rp.num == replyOurs {
				return OutcomeOK, "", nil
			}
			return OutcomeForeign, "", nil
		}
	default:
		if rp.typ == ':' {
			return outcomeOf(rp.num), "", nil
		}
	}
	return OutcomeError, "", fmt.Errorf("%w %q", errProtocol, rp.typ)
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

// appendFair appends fair_acquire.lua's call for waiter w (EVAL with the script's
// body after NOSCRIPT, else EVALSHA).
func appendFair(b []byte, eval bool, key, value string, ms int64, w *fairWaiter) []byte {
	b = appendArray(b, 11)
	if eval {
		b = appendBulk(b, "EVAL")
		b = appendBulk(b, fairAcquireLua)
	} else {
		b = appendBulk(b, "EVALSHA")
		b = appendBulk(b, fairAcquireScript.Hash())
	}
	b = appendBulk(b, "2")
	b = appendBulk(b, key)
	b = appendBulk2(b, key, queueSuffix)
	b = appendBulk(b, value)
	b = appendBulkInt(b, ms)
	b = appendBulk(b, w.id)
	b = appendBulk(b, w.score)
	b = appendBulk(b, w.hbMS)
	return appendBulk(b, w.mode)
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
