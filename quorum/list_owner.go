package quorum

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/redlock/redlock/internal/keyspace"
)

// Listings decode the owner of every value they show: the owner's JSON, as
// lockValue.String writes it, is decoded by hand (no reflection, nothing allocated
// but the host and label strings); anything else that json.Unmarshal takes (other
// spacing, escapes, key case, unknown members) goes to json.Unmarshal, so the
// result is json.Unmarshal's either way (FuzzOwnerDecoder checks it).

// parseValueOwner parses a value written by this package into *o (parseValue
// without the token); it never panics, and any other string gives an error
// matching keyspace.ErrBadValue, *o then unspecified.
func parseValueOwner(s string, o *Owner) error { return parseValueOwnerIn(s, o, nil) }

// The ways a value is not one of this package's: made once, as a listing meets
// one per lock of another library.
var (
	errValueTooLong   = fmt.Errorf("%w: longer than %d bytes", keyspace.ErrBadValue, maxValueLen)
	errValueFormat    = fmt.Errorf("%w: want rl1.<token>.<owner>", keyspace.ErrBadValue)
	errValueToken     = fmt.Errorf("%w: token is not base64url of %d bytes", keyspace.ErrBadValue, tokenBytes)
	errValueOwner     = fmt.Errorf("%w: owner is not base64url", keyspace.ErrBadValue)
	errValueOwnerJSON = fmt.Errorf("%w: owner is not a JSON object", keyspace.ErrBadValue)
)

// parseValueOwnerIn is parseValueOwner, taking the owners' strings from in (nil:
// none), where a listing keeps the host names and labels it has already seen.
func parseValueOwnerIn(s string, o *Owner, in *interned) error {
	if len(s) > maxValueLen {
		return errValueTooLong
	}
	ver, rest, ok1 := strings.Cut(s, ".")
	token, owner, ok2 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || ver != valueVersion || strings.Contains(owner, ".") {
		return errValueFormat
	}
	// Decoded on the stack: listings parse every value they show.
	var src, raw [maxValueLen]byte
	if n, err := b64.Decode(raw[:], src[:copy(src[:], token)]); err != nil || n != tokenBytes {
		return errValueToken
	}
	*o = Owner{}
	if owner == "" {
		return nil
	}
	n, err := b64.Decode(raw[:], src[:copy(src[:], owner)])
	if err != nil {
		return errValueOwner
	}
	var w ownerWire
	if !decodeOwnerFast(raw[:n], &w, in) {
		if err := decodeOwnerJSON(raw[:n], &w); err != nil {
			return errValueOwnerJSON
		}
	}
	*o = Owner{Host: w.H, PID: w.P, Label: w.O, Kind: w.K, Count: w.N, For: w.F}
	if w.L > 0 {
		o.TTL = time.Duration(w.L) * time.Millisecond
	}
	if w.T > 0 {
		o.At = time.UnixMilli(w.T)
	}
	return nil
}

// decodeOwnerJSON decodes an owner with json.Unmarshal, from a copy: what it is
// given stays on the caller's stack.
func decodeOwnerJSON(b []byte, w *ownerWire) error {
	var x ownerWire
	err := json.Unmarshal(bytes.Clone(b), &x)
	*w = x
	return err
}

// decodeOwnerFast decodes the compact JSON object of an owner as json.Marshal
// writes it: no spacing, members named h, p, o, t, l, k, n, f (each any number of
// times: the last one counts), strings without escapes or control characters and
// of valid UTF-8, integers without fraction, exponent or leading zero within
// 18 digits. It returns false, *w then unspecified, for anything else, which
// json.Unmarshal then decodes (or rejects).
func decodeOwnerFast(b []byte, w *ownerWire, in *interned) bool {
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return false
	}
	b = b[1 : len(b)-1]
	for len(b) > 0 {
		// "x":
		if len(b) < 4 || b[0] != '"' || b[2] != '"' || b[3] != ':' {
			return false
		}
		key := b[1]
		b = b[4:]
		switch key {
		case 'h', 'o', 'k', 'f':
			s, rest, ok := fastString(b, in)
			if !ok {
				return false
			}
			switch key {
			case 'h':
				w.H = s
			case 'o':
				w.O = s
			case 'f':
				w.F = s
			default:
				w.K = s
			}
			b = rest
		case 'p', 't', 'l', 'n':
			v, rest, ok := fastInt(b)
			if !ok {
				return false
			}
			if (key == 'p' || key == 'n') && int64(int(v)) != v {
				return false
			}
			switch key {
			case 'p':
				w.P = int(v)
			case 't':
				w.T = v
			case 'l':
				w.L = v
			default:
				w.N = int(v)
			}
			b = rest
		default:
			return false
		}
		if len(b) > 0 {
			if b[0] != ',' || len(b) == 1 {
				return false
			}
			b = b[1:]
		}
	}
	return true
}

// interned keeps strings (owners' host names and labels, which repeat from lock
// to lock) to be given again instead of copies: at most internMax of them.
type interned struct{ m map[string]string }

// internMax bounds what an interned keeps.
const internMax = 1024

// get returns b as a string: the one kept when there is one.
func (in *interned) get(b []byte) string {
	if in == nil {
		return string(b)
	}
	if s, ok := in.m[string(b)]; ok {
		return s
	}
	s := string(b)
	if in.m == nil {
		in.m = map[string]string{}
	}
	if len(in.m) < internMax {
		in.m[s] = s
	}
	return s
}

// fastString reads a JSON string without escapes at the start of b.
func fastString(b []byte, in *interned) (string, []byte, bool) {
	if len(b) == 0 || b[0] != '"' {
		return "", nil, false
	}
	for i := 1; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			s := b[1:i]
			if !utf8.Valid(s) {
				return "", nil, false
			}
			return in.get(s), b[i+1:], true
		case c == '\\' || c < 0x20:
			return "", nil, false
		}
	}
	return "", nil, false
}

// fastInt reads a JSON integer of at most 18 digits at the start of b.
func fastInt(b []byte) (int64, []byte, bool) {
	i := 0
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		i++
	}
	start := i
	var v int64
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		v = v*10 + int64(b[i]-'0')
	}
	digits := i - start
	if digits == 0 || digits > 18 || digits > 1 && b[start] == '0' {
		return 0, nil, false
	}
	if neg {
		v = -v
	}
	return v, b[i:], true
}
