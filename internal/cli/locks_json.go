package cli

import (
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/redlock/redlock/admin"
)

// The locks of a `locks -json` listing are encoded by hand, straight from each
// admin.LockInfo and already indented: byte for byte what encoding/json writes
// for s.lockJSON(li), indented as writeDoc indents it (FuzzLockEncoderMatchesJSON
// holds the two equal), without the reflection, the intermediate lockJSON and
// the second pass of indentation. The rest of the document (its head, the
// primitives) is still written by encoding/json.

// lockIndent is where a lock of the document's "locks" array starts: the
// document's second level.
const lockIndent = "\n    "

// lockEncoder encodes the locks of one listing.
type lockEncoder struct {
	s *lockSession
	// The redacted error of each master that did not answer, by its error: a
	// master that failed is the same error under every lock.
	errs map[error]string
}

// appendLock appends the JSON of li, as "\n    " followed by the indented object
// encoding/json and appendIndented(…, "    ") write for s.lockJSON(li).
func (e *lockEncoder) appendLock(dst []byte, li *admin.LockInfo) []byte {
	const in1, in2, in3 = lockIndent + "  ", lockIndent + "    ", lockIndent + "      "
	dst = append(dst, lockIndent+"{"+in1+`"name": `...)
	dst = appendJSONString(dst, li.Name)
	dst = append(dst, ","+in1+`"key": `...)
	dst = appendJSONString(dst, li.Key)
	dst = append(dst, ","+in1+`"state": `...)
	dst = appendJSONString(dst, string(li.State))
	dst = append(dst, ","+in1+`"votes": `...)
	dst = strconv.AppendInt(dst, int64(li.Votes), 10)
	dst = append(dst, ","+in1+`"quorum": `...)
	dst = strconv.AppendInt(dst, int64(li.Quorum), 10)
	dst = append(dst, ","+in1+`"total": `...)
	dst = strconv.AppendInt(dst, int64(li.Total), 10)
	var value string
	if li.Value != "" {
		value = li.RedactedValue()
	}
	if value != "" {
		dst = append(dst, ","+in1+`"value": `...)
		dst = appendJSONString(dst, value)
	}
	if o := li.Owner; o != nil {
		dst = append(dst, ","+in1+`"owner": {`...)
		n := 0
		member := func(name string) {
			if n > 0 {
				dst = append(dst, ',')
			}
			n++
			dst = append(dst, in2...)
			dst = append(dst, name...)
		}
		if o.Label != "" {
			member(`"owner": `)
			dst = appendJSONString(dst, o.Label)
		}
		if o.Host != "" {
			member(`"host": `)
			dst = appendJSONString(dst, o.Host)
		}
		if o.PID != 0 {
			member(`"pid": `)
			dst = strconv.AppendInt(dst, int64(o.PID), 10)
		}
		if at := jsonTime(o.At); at != nil {
			member(`"acquired_at": `)
			dst = appendJSONTime(dst, *at)
		}
		if ms(o.TTL) != 0 {
			member(`"ttl_ms": `)
			dst = appendMS(dst, o.TTL)
		}
		if n > 0 {
			dst = append(dst, in1...)
		}
		dst = append(dst, '}')
	}
	dst = append(dst, ","+in1+`"library": `...)
	dst = appendJSONString(dst, li.Library)
	dst = append(dst, ","+in1+`"validity_ms": `...)
	switch {
	case li.Validity == admin.NoExpiry:
		dst = append(dst, '0')
	case li.Validity > 0:
		dst = appendMS(dst, li.Validity)
		if until := jsonTime(li.Deadline()); until != nil {
			dst = append(dst, ","+in1+`"valid_until": `...)
			dst = appendJSONTime(dst, *until)
		}
	default:
		dst = append(dst, '0')
	}
	if li.Validity == admin.NoExpiry {
		dst = append(dst, ","+in1+`"no_expiry": true`...)
	}
	if at := jsonTime(li.FreeAt); at != nil {
		dst = append(dst, ","+in1+`"free_at": `...)
		dst = appendJSONTime(dst, *at)
	}
	if li.Fence != 0 {
		dst = append(dst, ","+in1+`"fence": `...)
		dst = strconv.AppendInt(dst, li.Fence, 10)
	}
	dst = append(dst, ","+in1+`"masters": [`...)
	for i := range li.Masters {
		mv := &li.Masters[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, in2+"{"+in3+`"master": `...)
		dst = appendJSONString(dst, mv.Master)
		if mv.Present {
			dst = append(dst, ","+in3+`"present": true`...)
		} else {
			dst = append(dst, ","+in3+`"present": false`...)
		}
		if mv.Type != "" {
			dst = append(dst, ","+in3+`"type": `...)
			dst = appendJSONString(dst, mv.Type)
		}
		if mv.Present {
			v := ""
			switch {
			case mv.Value != "" && mv.Value == li.Value:
				v = value // the same value, redacted once
			case mv.Value != "":
				v = admin.Redact(mv.Value)
			}
			if v != "" {
				dst = append(dst, ","+in3+`"value": `...)
				dst = appendJSONString(dst, v)
			}
			if mv.Truncated && mv.Size != 0 {
				dst = append(dst, ","+in3+`"value_bytes": `...)
				dst = strconv.AppendInt(dst, mv.Size, 10)
			}
			switch {
			case mv.PTTL < 0:
				dst = append(dst, ","+in3+`"pttl_ms": -1`...)
			case ms(mv.PTTL) != 0:
				dst = append(dst, ","+in3+`"pttl_ms": `...)
				dst = appendMS(dst, mv.PTTL)
			}
		}
		if mv.Err != nil {
			if msg := e.errorOf(mv.Err); msg != "" {
				dst = append(dst, ","+in3+`"error": `...)
				dst = appendJSONString(dst, msg)
			}
		}
		dst = append(dst, in2+"}"...)
	}
	if len(li.Masters) > 0 {
		dst = append(dst, in1...)
	}
	return append(dst, "]"+lockIndent+"}"...)
}

// errorOf returns the redacted message of a master's error, once per error.
func (e *lockEncoder) errorOf(err error) string {
	if msg, ok := e.errs[err]; ok {
		return msg
	}
	msg := e.s.redact(err.Error())
	if e.errs == nil {
		e.errs = map[error]string{}
	}
	if len(e.errs) < 64 { // a listing has one error per master
		e.errs[err] = msg
	}
	return msg
}

// jsonTime returns &t when a JSON document can hold it (time.Time's MarshalJSON
// writes only the years 0 to 9999), else nil: a time is then omitted as an
// absent one is. An owner's acquisition time and a leader's record are written
// by whoever wrote the value: a hostile one must not make a document fail.
func jsonTime(t time.Time) *time.Time {
	if t.IsZero() || t.Year() < 0 || t.Year() > 9999 {
		return nil
	}
	return &t
}

// appendJSONTime appends t as time.Time's MarshalJSON writes it (t's year is
// within 0 to 9999: see jsonTime).
func appendJSONTime(dst []byte, t time.Time) []byte {
	dst = append(dst, '"')
	dst = t.AppendFormat(dst, time.RFC3339Nano)
	return append(dst, '"')
}

// appendMS appends ms(d) as encoding/json writes a float64: the shortest
// decimal that reads back as the same number. A whole number of microseconds
// below 2^42 ms (139 years) is that decimal with at most three digits after the
// point: the float64 nearest to it has neighbours closer than 0.001 apart, so no
// other decimal of three digits or fewer reads back as it.
func appendMS(dst []byte, d time.Duration) []byte {
	us := d.Microseconds()
	if us <= -1<<42*1000 || us >= 1<<42*1000 {
		return strconv.AppendFloat(dst, ms(d), 'f', -1, 64)
	}
	if us < 0 {
		dst = append(dst, '-')
		us = -us
	}
	dst = strconv.AppendInt(dst, us/1000, 10)
	frac := us % 1000
	if frac == 0 {
		return dst
	}
	digits := [3]byte{byte('0' + frac/100), byte('0' + frac/10%10), byte('0' + frac%10)}
	n := 3
	for digits[n-1] == '0' {
		n--
	}
	dst = append(dst, '.')
	return append(dst, digits[:n]...)
}

// jsonSafe marks the ASCII bytes that encoding/json writes as they are in a
// string (HTML escaping on, as json.Marshal does): not a control character, '"',
// '\\', '<', '>' or '&'.
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = true
	}
	for _, c := range `"\<>&` {
		t[c] = false
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string, as encoding/json writes it with
// HTML escaping (json.Marshal): control characters, '"' and '\\' escaped, '<',
// '>' and '&' as \u003c, \u003e and \u0026, U+2028 and U+2029 as \u2028 and
// \u2029, and each byte of invalid UTF-8 as \ufffd. The result is valid JSON
// whatever s holds.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if jsonSafe[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case c == '\u2028' || c == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
