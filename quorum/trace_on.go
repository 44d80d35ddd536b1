//go:build redlocktrace

package quorum

import (
	"encoding/json"
	"io"
	"sync"
	"time"
)

// The handoff trace: with the redlocktrace build tag, a Manager records, with
// wall-clock timestamps, each round it sends (its start, each master's reply as
// read, its end), each pause between rounds (and whether a wake-up ended it), and
// each wake-up message its subscriptions read, so that one handoff can be taken
// apart end to end across processes (bench/trace_test.go). Never in a normal build.

// TraceRecord is one traced step, times in Unix ns.
type TraceRecord struct {
	Kind  string  `json:"k"`           // "round", "await", "wake", "mark"
	Op    string  `json:"o,omitempty"` // a round's op, a mark's name, a wake-up's channel
	T     int64   `json:"t"`           // start (a wake-up: when its message was read)
	End   int64   `json:"e,omitempty"`
	Lat   []int32 `json:"l,omitempty"` // a round's masters' replies, µs after T, in the masters' order
	Votes int     `json:"v,omitempty"` // a round's grants; a wake-up: the waiters it woke
	Node  int     `json:"n,omitempty"` // a wake-up's master
	Note  string  `json:"x,omitempty"` // a wake-up's named waiters; "woken" for a pause a wake-up ended
	Delay int64   `json:"d,omitempty"` // a pause's planned length, ns
}

// tracing is true: the hooks read the clock.
const tracing = true

var traced struct {
	mu   sync.Mutex
	recs []TraceRecord
}

func traceAdd(r TraceRecord) {
	traced.mu.Lock()
	traced.recs = append(traced.recs, r)
	traced.mu.Unlock()
}

func traceRound(rep *Report, t0, end time.Time) {
	lat := make([]int32, len(rep.Nodes))
	for i, nr := range rep.Nodes {
		lat[i] = int32(nr.Latency / time.Microsecond)
	}
	traceAdd(TraceRecord{Kind: "round", Op: rep.Op, T: t0.UnixNano(), End: end.UnixNano(), Lat: lat, Votes: rep.Votes})
}

func traceAwait(t0 time.Time, d time.Duration, woken bool) {
	r := TraceRecord{Kind: "await", T: t0.UnixNano(), End: time.Now().UnixNano(), Delay: int64(d)}
	if woken {
		r.Note = "woken"
	}
	traceAdd(r)
}

func traceWake(node int, ch, payload string, woke int, at time.Time) {
	names, _ := wakeNames(payload)
	traceAdd(TraceRecord{Kind: "wake", Op: ch, T: at.UnixNano(), End: time.Now().UnixNano(), Node: node, Votes: woke, Note: names})
}

func traceMark(what string, t0 time.Time) {
	traceAdd(TraceRecord{Kind: "mark", Op: what, T: t0.UnixNano(), End: time.Now().UnixNano()})
}

// TraceWrite writes the records traced so far as JSON and forgets them. Only in
// builds with the redlocktrace tag.
func TraceWrite(w io.Writer) error {
	traced.mu.Lock()
	recs := traced.recs
	traced.recs = nil
	traced.mu.Unlock()
	return json.NewEncoder(w).Encode(recs)
}
