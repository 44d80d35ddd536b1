//go:build redlocktrace

package quorum

import (
	"strconv"
	"strings"
	"time"

	"github.com/redlock/redlock/internal/trace"
	"github.com/redlock/redlock/internal/wire"
)

// The handoff trace: with the redlocktrace build tag, a Manager records, with
// wall-clock timestamps, each round it sends (its start, each master's reply as
// read, its end), each pause between rounds (and whether a wake-up ended it), and
// each wake-up message its subscriptions read, so that one handoff can be taken
// apart end to end across processes (bench/trace_test.go reads it with
// trace.Write). Never in a normal build.

// tracing is true: the hooks read the clock.
const tracing = true

func traceRound(rep *Report, res []wire.Result, t0, end time.Time) {
	lat := make([]int32, len(rep.Nodes))
	replies := make([]string, len(res))
	for i, nr := range rep.Nodes {
		lat[i] = int32(nr.Latency / time.Microsecond)
	}
	for i, r := range res {
		switch r.Type {
		case ':':
			replies[i] = strconv.FormatInt(r.Int, 10)
		case 0:
			replies[i] = "none"
		default:
			replies[i] = string(r.Type)
		}
	}
	trace.Add(trace.Record{Kind: "round", Op: rep.Op, T: t0.UnixNano(), End: end.UnixNano(), Lat: lat, Votes: rep.Votes, Note: strings.Join(replies, " ")})
}

func traceAwait(t0 time.Time, d time.Duration, woken bool) {
	r := trace.Record{Kind: "await", T: t0.UnixNano(), End: time.Now().UnixNano(), Delay: int64(d)}
	if woken {
		r.Note = "woken"
	}
	trace.Add(r)
}

func traceWake(node int, ch, payload string, woke int, at time.Time) {
	names, _ := wakeNames(payload)
	trace.Add(trace.Record{Kind: "wake", Op: ch, T: at.UnixNano(), End: time.Now().UnixNano(), Node: node, Votes: woke, Note: names})
}
