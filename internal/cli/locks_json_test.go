package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/quorum"
)

// fuzzLock builds a lock of two masters from the fuzzer's strings and numbers:
// every field the encoder writes, hostile where a user can write it.
func fuzzLock(name, value, other, label, typ, errMsg string, pid int, atMS, ttl, pttl, validity, fence, size int64, flags uint8) *admin.LockInfo {
	at := time.Date(2026, 11, 25, 3, 0, 0, 123456789, time.UTC)
	li := &admin.LockInfo{Name: name, Key: "lock:" + name, State: admin.LockState(typ), Votes: pid % 7, Quorum: 2, Total: 2,
		Value: value, Library: label, Validity: time.Duration(validity), ObservedAt: at, Fence: fence}
	if flags&1 != 0 {
		li.Owner = &quorum.Owner{Label: label, Host: other, PID: pid, TTL: time.Duration(ttl)}
		if flags&2 != 0 {
			li.Owner.At = time.UnixMilli(atMS)
		}
	}
	if flags&4 != 0 {
		li.Validity = admin.NoExpiry
	}
	li.Masters = []admin.MasterView{
		{Master: "a", Present: true, Type: "string", Value: value, Size: int64(len(value)), PTTL: time.Duration(pttl)},
		{Master: label, Present: flags&8 != 0, Type: typ, Value: other, Size: size, Truncated: flags&16 != 0, PTTL: time.Duration(-pttl)},
	}
	if flags&32 != 0 {
		li.Masters[1] = admin.MasterView{Master: other, Err: errors.New(errMsg)}
	}
	if flags&64 != 0 {
		li.Masters = nil
	}
	return li
}

// The hand-written encoder writes what encoding/json writes for lockJSON,
// indented as the document indents it, and always valid JSON: names, owners,
// types and values of any bytes (control characters, invalid UTF-8, quotes,
// HTML), numbers of any size, times beyond what JSON can hold.
func FuzzLockEncoderMatchesJSON(f *testing.F) {
	f.Add("job/1", "rl1.AAAAAAAAAAAAAAAAAAAAAAAAAAA.eyJoIjoiaCJ9", "other", "nightly", "string", "no reply", 42, int64(1764039600000), int64(30*time.Second), int64(29999500*time.Microsecond), int64(29*time.Second), int64(7), int64(512), uint8(1|2|8))
	f.Add("\x1b[31mred\x07\r\n\t\b\f\x00\x7f", "\xff\xfe<script>&amp;\u2028\u2029", "\"quoted\\\"", "é\xc3", "hash", "\x1b]0;title\x07", -1, int64(999999999999999999), int64(-1500), int64(-1), int64(1), int64(-9), int64(1<<40), uint8(255-64))
	f.Add(strings.Repeat("n", 70000), strings.Repeat("v\x01", 300), strings.Repeat("\u2028", 100), "", "", "", 0, int64(-62135596800001), int64(math.MaxInt64), int64(math.MinInt64), int64(math.MaxInt64), int64(math.MinInt64), int64(500<<20), uint8(1|2|16|32))
	f.Add("", "", "", "", "", "", 1, int64(0), int64(999), int64(1<<62), int64(-5), int64(0), int64(0), uint8(64|4|1))
	f.Fuzz(func(t *testing.T, name, value, other, label, typ, errMsg string, pid int, atMS, ttl, pttl, validity, fence, size int64, flags uint8) {
		s := &lockSession{redact: func(s string) string { return strings.ReplaceAll(s, "secret", "****") }}
		li := fuzzLock(name, value, other, label, typ, errMsg, pid, atMS, ttl, pttl, validity, fence, size, flags)
		compact, err := json.Marshal(s.lockJSON(li))
		require.NoError(t, err, "encoding/json must take every lock")
		var want bytes.Buffer
		want.WriteString(lockIndent)
		require.NoError(t, json.Indent(&want, compact, lockIndent[1:], "  "))
		e := lockEncoder{s: s}
		got := e.appendLock(nil, li)
		require.Equal(t, want.String(), string(got))
		require.True(t, json.Valid(got))
		require.Equal(t, string(got), string(e.appendLock(nil, li)), "the errors kept per master change nothing")
	})
}

// ms values are written as encoding/json writes the float64 ms() returns, up to
// 2^42 ms and past it.
func TestAppendMSMatchesEncodingJSON(t *testing.T) {
	ds := []time.Duration{0, 1, 999, 1000, 1001, 1500, -1000, -1500, time.Millisecond, 29999500 * time.Microsecond,
		time.Hour, 24 * 365 * time.Hour, 1<<42*time.Millisecond - 1, 1 << 42 * time.Millisecond, -1<<42*time.Millisecond + 1,
		-1 << 42 * time.Millisecond, math.MaxInt64, math.MinInt64, math.MaxInt64 - 999}
	for i := range 64 {
		ds = append(ds, time.Duration(1)<<i+time.Duration(i)*1234567, -(time.Duration(1)<<i)+time.Duration(i)*7654321)
	}
	for _, d := range ds {
		want, err := json.Marshal(ms(d))
		require.NoError(t, err)
		assert.Equal(t, string(want), string(appendMS(nil, d)), "%d ns", int64(d))
	}
}

// Regression: an owner's acquisition time written far in the future (an
// "rl1" value anyone can write) made encoding/json fail on time.Time, and with
// it the whole `locks -json` document. The time is now left out, as an absent one.
func TestLocksJSONOwnerTimeOutOfRangeIsOmitted(t *testing.T) {
	s := &lockSession{redact: func(s string) string { return s }}
	lst := streamListing(3)
	lst.Locks[1].Owner = &quorum.Owner{Label: "far", At: time.UnixMilli(999999999999999999)}
	lst.Locks[2].Owner = &quorum.Owner{Label: "before year 0", At: time.UnixMilli(-62198755200001)}
	head := *lst
	head.Locks = nil
	var out bytes.Buffer
	require.NoError(t, s.writeListingJSON(&out, &head, lockSeq(lst), nil, nil))
	require.True(t, json.Valid(out.Bytes()), out.String())
	var doc struct {
		Locks []struct {
			Owner map[string]any `json:"owner"`
		} `json:"locks"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &doc))
	require.Len(t, doc.Locks, 3)
	assert.Equal(t, map[string]any{"owner": "far"}, doc.Locks[1].Owner)
	assert.Equal(t, map[string]any{"owner": "before year 0"}, doc.Locks[2].Owner)
	var whole bytes.Buffer
	require.NoError(t, writeDoc(&whole, s.listingJSON(lst, nil)), "the whole document (watch's) too")
	assert.Equal(t, whole.String(), out.String())
}

// A failed write ends the listing with the error, without writing the rest.
func TestWriteListingJSONStopsOnWriteError(t *testing.T) {
	s := &lockSession{redact: func(s string) string { return s }}
	lst := streamListing(2000)
	head := *lst
	head.Locks = nil
	w := &failingWriter{after: 1}
	err := s.writeListingJSON(w, &head, lockSeq(lst), nil, nil)
	require.ErrorIs(t, err, errWriteFailed)
	assert.Equal(t, 2, w.calls, "one write after the failure at most is attempted: none")
}

var errWriteFailed = errors.New("write failed")

type failingWriter struct{ after, calls int }

func (w *failingWriter) Write(p []byte) (int, error) {
	w.calls++
	if w.calls > w.after {
		return 0, errWriteFailed
	}
	return len(p), nil
}
