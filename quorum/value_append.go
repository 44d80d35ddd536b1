package quorum

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync/atomic"
)

// A value is written on every acquisition round: it is encoded into a buffer on
// the stack, with one allocation for the string. The owner's JSON is the
// encoding of ownerWire by encoding/json, byte for byte
// (FuzzAppendOwnerJSON): the string fields, which rarely change, are encoded
// by encoding/json once and kept (lastOwner); the times are numbers.

// ownerParts is the JSON of an owner's fields other than the times: head holds
// "h", "p" and "o", tail "k", "n" and "f", each without braces ("" when all are empty).
type ownerParts struct {
	host, label, kind, tag string
	pid, count             int
	head, tail             []byte
}

// lastOwner is the parts of the last owner encoded: most processes describe one
// owner, over and over.
var lastOwner atomic.Pointer[ownerParts]

// partsOf returns the JSON parts of w's fields other than the times.
func partsOf(w *ownerWire) *ownerParts {
	if p := lastOwner.Load(); p != nil && p.host == w.H && p.pid == w.P && p.label == w.O && p.kind == w.K && p.count == w.N && p.tag == w.F {
		return p
	}
	head, _ := json.Marshal(ownerWire{H: w.H, P: w.P, O: w.O}) // cannot fail: strings and ints only
	tail, _ := json.Marshal(ownerWire{K: w.K, N: w.N, F: w.F})
	p := &ownerParts{host: w.H, pid: w.P, label: w.O, kind: w.K, count: w.N, tag: w.F,
		head: bytes.Trim(head, "{}"), tail: bytes.Trim(tail, "{}")}
	lastOwner.Store(p)
	return p
}

// appendOwnerJSON appends w as json.Marshal encodes it.
func appendOwnerJSON(b []byte, w *ownerWire) []byte {
	p := partsOf(w)
	b = append(b, '{')
	open := len(b)
	field := func(b []byte) []byte {
		if len(b) > open {
			b = append(b, ',')
		}
		return b
	}
	b = append(b, p.head...)
	if w.T != 0 {
		b = strconv.AppendInt(append(field(b), `"t":`...), w.T, 10)
	}
	if w.L != 0 {
		b = strconv.AppendInt(append(field(b), `"l":`...), w.L, 10)
	}
	if len(p.tail) > 0 {
		b = append(field(b), p.tail...)
	}
	return append(b, '}')
}

// appendValue appends the value "rl1.<token>.<owner>" of v, token its token's
// random bytes.
func appendValue(b []byte, token []byte, w *ownerWire) []byte {
	var js [2 * maxValueLen]byte
	raw := appendOwnerJSON(js[:0], w)
	b = append(b, valueVersion+"."...)
	b = b64.AppendEncode(b, token)
	b = append(b, '.')
	return b64.AppendEncode(b, raw)
}
