package quorum

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/redlock/redlock/internal/keyspace"
)

// valueVersion is the first field of every value this package writes.
const valueVersion = "rl1"

// maxValueLen bounds a lock value written by this package.
const maxValueLen = 256

// tokenBytes is the number of random bytes in a token (160 bits).
const tokenBytes = 20

var b64 = base64.RawURLEncoding

// Owner says who took a lock. It is informational only: safety rests on the token.
type Owner struct {
	Host  string    `json:"host,omitempty"`
	PID   int       `json:"pid,omitempty"`
	Label string    `json:"owner,omitempty"`
	At    time.Time `json:"acquired_at"`
	// TTL is the TTL the lock was taken with (0 when unknown): extending by token
	// defaults to it.
	TTL time.Duration `json:"-"`
	// Kind is the primitive that wrote the value: "" for a plain lock, "sem" for a
	// semaphore permit, "multi" for a multi-name lock, "shared" for a shared hold,
	// "leader" for an election's leadership (primitives.go).
	Kind string `json:"kind,omitempty"`
	// Count is a semaphore's permit count N, or the number of names of a
	// multi-name lock; 0 otherwise.
	Count int `json:"count,omitempty"`
	// For is the tag of the name the value was taken for (nameTag; "" in values
	// of earlier versions): admin.CheckTokenFor tells a token of another lock by it.
	For string `json:"-"`
}

// ownerWire is the compact JSON form of Owner inside a value.
type ownerWire struct {
	H string `json:"h,omitempty"`
	P int    `json:"p,omitempty"`
	O string `json:"o,omitempty"`
	T int64  `json:"t,omitempty"`
	L int64  `json:"l,omitempty"` // TTL in ms
	K string `json:"k,omitempty"` // Owner.Kind
	N int    `json:"n,omitempty"` // Owner.Count
	F string `json:"f,omitempty"` // Owner.For
}

// The primitives' tags in Owner.Kind (admin.OwnerPrimitive reads them).
const (
	ownerSem    = keyspace.OwnerSemaphore
	ownerMulti  = keyspace.OwnerMulti
	ownerShared = keyspace.OwnerShared
	ownerLeader = keyspace.OwnerLeader
)

// lockValue is a parsed lock value "rl1.<token>.<owner>" (admin.Value hands
// it out, through adminlink.Values).
type lockValue struct {
	// Token is base64url (no padding) of 20 random bytes.
	Token string
	Owner Owner
}

// parseValue parses a value written by this package. It never panics; any other
// string gives an error matching keyspace.ErrBadValue (admin.ErrBadValue).
func parseValue(s string) (lockValue, error) {
	var v lockValue
	if err := parseValueOwner(s, &v.Owner); err != nil {
		return lockValue{}, err
	}
	v.Token, _, _ = strings.Cut(s[len(valueVersion)+1:], ".")
	return v, nil
}

// String formats the value as it is stored in Redis.
func (v lockValue) String() string {
	w := v.Owner.wire()
	raw, _ := json.Marshal(w) // cannot fail: strings and ints only
	return valueVersion + "." + v.Token + "." + b64.EncodeToString(raw)
}

// wire returns the compact form of o written in a value.
func (o *Owner) wire() ownerWire {
	w := ownerWire{H: o.Host, P: o.PID, O: o.Label, L: o.TTL.Milliseconds(), K: o.Kind, N: o.Count, F: o.For}
	if !o.At.IsZero() {
		w.T = o.At.UnixMilli()
	}
	return w
}

// newValue returns a fresh value with 20 random bytes and the owner description,
// trimmed so the whole stays within maxValueLen: lockValue{Token, Owner}.String(),
// built with one allocation (appendValue).
func newValue(owner Owner) (string, error) {
	var tok [tokenBytes]byte
	if _, err := rand.Read(tok[:]); err != nil {
		return "", fmt.Errorf("random token: %w", err)
	}
	owner.Label = truncate(owner.Label, maxOwnerLabel)
	owner.Host = truncate(owner.Host, maxOwnerLabel)
	var buf [2 * maxValueLen]byte
	w := owner.wire()
	b := appendValue(buf[:0], tok[:], &w)
	// JSON escaping can grow a string up to six times: shrink the host, then the
	// label, until the value fits.
	for len(b) > maxValueLen {
		if owner.Host != "" {
			owner.Host = truncate(owner.Host, len(owner.Host)-8)
		} else {
			owner.Label = truncate(owner.Label, len(owner.Label)-8)
		}
		w = owner.wire()
		b = appendValue(buf[:0], tok[:], &w)
	}
	return string(b), nil
}

func truncate(s string, n int) string {
	if n < 0 {
		n = 0
	}
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !validUTF8Tail(s) {
		s = s[:len(s)-1]
	}
	return s
}

func validUTF8Tail(s string) bool {
	// A string cut in the middle of a rune ends with an invalid sequence.
	return strings.ToValidUTF8(s, "\uFFFD") == s
}

// defaultOwner describes this process.
func defaultOwner(label string) Owner {
	host, _ := os.Hostname()
	return Owner{Host: host, PID: os.Getpid(), Label: label}
}

// library guesses which client wrote a lock value (keyspace.Library): "redlock"
// for values parseValue reads.
func library(value string) string {
	return keyspace.Library(value, func(v string) bool {
		_, err := parseValue(v)
		return err == nil
	})
}
