// Package trace keeps the handoff trace of package quorum: built with the
// redlocktrace build tag, a Manager adds a Record for each round it sends (its
// start, each master's reply as read, its end), each pause between rounds (and
// whether a wake-up ended it), and each wake-up message its subscriptions read,
// so that one handoff can be taken apart end to end across processes
// (bench/trace_test.go). In a normal build nothing calls Add and the trace stays
// empty.
package trace

import (
	"encoding/json"
	"io"
	"sync"
)

// Record is one traced step, times in Unix ns.
type Record struct {
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

var traced struct {
	mu   sync.Mutex
	recs []Record
}

// Add keeps r until the next Write. Safe for concurrent use.
func Add(r Record) {
	traced.mu.Lock()
	traced.recs = append(traced.recs, r)
	traced.mu.Unlock()
}

// Write writes the records kept so far as one JSON array and forgets them.
func Write(w io.Writer) error {
	traced.mu.Lock()
	recs := traced.recs
	traced.recs = nil
	traced.mu.Unlock()
	return json.NewEncoder(w).Encode(recs)
}
