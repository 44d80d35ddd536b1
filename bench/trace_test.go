//go:build redlocktrace

package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/trace"
)

// One handoff taken apart, end to end, across the worker processes. Built with the
// redlocktrace tag, each worker's Manager records its rounds, pauses and wake-up
// messages with wall-clock timestamps (quorum/trace_on.go), and saves them in
// REDLOCK_BENCH_TRACE; TestTraceReport then sets every gap between two
// acquisitions beside the steps it went through:
//
//	dir=$(mktemp -d); REDLOCK_BENCH_TRACE=$dir REDLOCK_BENCH_OPS=2000 REDLOCK_BENCH_CLIENTS=5 \
//	  go -C bench test -tags redlocktrace . -run '^$' -bench 'Contention/procs=5/quorum-fair' -benchtime 1x
//	REDLOCK_BENCH_TRACE=$dir go -C bench test -tags redlocktrace . -run TestTraceReport -v

const envTrace = "REDLOCK_BENCH_TRACE"

func init() {
	traceSave = func(id string) error {
		dir := os.Getenv(envTrace)
		if dir == "" {
			return nil
		}
		f, err := os.Create(filepath.Join(dir, id+".trace"))
		if err != nil {
			return err
		}
		defer f.Close()
		return trace.Write(f)
	}
}

type traced struct {
	proc string
	trace.Record
}

// handoff is one gap between two acquisitions, by step (ns).
type handoff struct {
	from, to    string
	at          int64 // the first acquisition (the end of its round)
	gap         int64
	toRelease   int64   // the holder's acquisition to its release round's start
	release     []int32 // the release round's masters, µs after its start
	releaseEnd  int64   // the release round's duration
	toWake      int64   // the release round's start to the first wake-up read by the next holder
	wakeNode    int
	wakeLag     int64 // the wake-up read, less when the holder read the release's reply of its master
	toAwaitEnd  int64 // that wake-up to the end of the next holder's pause
	toRound     int64 // the pause's end to the winning round's start
	round       int64 // the winning round
	roundLat    []int32
	extra       []string
	later       []int64 // the same wake-up from other masters, after the first
	extraRounds int     // the next holder's rounds after the release began, before the winning one
	woken       bool
	others      []string // other processes' rounds that overlapped the winning round
}

func TestTraceReport(t *testing.T) {
	dir := os.Getenv(envTrace)
	if dir == "" {
		t.Skip("set " + envTrace + " to a directory of traces")
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.trace"))
	require.NoError(t, err)
	byProc := map[string][]trace.Record{}
	var all []traced
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		var recs []trace.Record
		require.NoError(t, json.Unmarshal(data, &recs))
		p := strings.TrimSuffix(filepath.Base(f), ".trace")
		byProc[p] = recs
		for _, r := range recs {
			all = append(all, traced{p, r})
		}
	}
	var acqs []traced
	for _, r := range all {
		if r.Kind == "round" && r.Op == "acquire" && r.Votes >= 3 {
			acqs = append(acqs, r)
		}
	}
	slices.SortFunc(acqs, func(a, b traced) int { return int(a.End - b.End) })
	var hs []handoff
	for i := 1; i < len(acqs); i++ {
		h, ok := takeApart(acqs[i-1], acqs[i], byProc, all)
		if ok {
			hs = append(hs, h)
		}
	}
	t.Logf("%d acquisitions, %d handoffs taken apart", len(acqs), len(hs))
	steps := []struct {
		name string
		get  func(h handoff) int64
	}{
		{"gap", func(h handoff) int64 { return h.gap }},
		{"acquired -> release sent", func(h handoff) int64 { return h.toRelease }},
		{"release round", func(h handoff) int64 { return h.releaseEnd }},
		{"release sent -> first wake-up read", func(h handoff) int64 { return h.toWake }},
		{"wake-up read - its master's release reply read", func(h handoff) int64 { return h.wakeLag }},
		{"wake-up read -> pause ends", func(h handoff) int64 { return h.toAwaitEnd }},
		{"pause ends -> winning round sent", func(h handoff) int64 { return h.toRound }},
		{"winning round", func(h handoff) int64 { return h.round }},
	}
	var sb strings.Builder
	long := slices.Clone(hs)
	slices.SortFunc(long, func(a, b handoff) int { return int(b.gap - a.gap) })
	n := len(long) / 100 // the longest 1 %
	fmt.Fprintf(&sb, "%-36s %9s %9s %9s %9s | longest 1%% (%d): %9s %9s\n", "step", "p50", "p90", "p99", "max", n, "p50", "max")
	for _, s := range steps {
		v := make([]int64, len(hs))
		for i, h := range hs {
			v[i] = s.get(h)
		}
		w := make([]int64, n)
		for i := range n {
			w[i] = s.get(long[i])
		}
		fmt.Fprintf(&sb, "%-36s %9s %9s %9s %9s | %9s %9s\n", s.name, q(v, 0.5), q(v, 0.9), q(v, 0.99), q(v, 1), q(w, 0.5), q(w, 1))
	}
	woken, extra := 0, 0
	for _, h := range long[:n] {
		if h.woken {
			woken++
		}
		extra += h.extraRounds
	}
	fmt.Fprintf(&sb, "the longest 1%%: %d of %d ended by a pause a wake-up ended; %d extra rounds\n", woken, n, extra)
	// Which step took the most time beyond its median, in each gap over twice the median gap.
	med := make([]int64, len(steps))
	for k, st := range steps {
		v := make([]int64, len(hs))
		for i, h := range hs {
			v[i] = st.get(h)
		}
		slices.Sort(v)
		med[k] = v[len(v)/2]
	}
	dominant := map[string]int{}
	over := 0
	for _, h := range hs {
		if h.gap <= 2*med[0] {
			continue
		}
		over++
		best, bestK := int64(-1), 0
		for k := 1; k < len(steps); k++ {
			if k == 2 || k == 4 {
				continue // the release round's end and the wake-up's lag are not steps of the chain
			}
			if e := steps[k].get(h) - med[k]; e > best {
				best, bestK = e, k
			}
		}
		if h.extraRounds > 0 {
			dominant["(with extra rounds) "+steps[bestK].name]++
		} else {
			dominant[steps[bestK].name]++
		}
	}
	var second, third []int64
	none := 0
	for _, h := range hs {
		switch len(h.later) {
		case 0:
			none++
		case 1:
			second = append(second, h.later[0])
		default:
			second = append(second, h.later[0])
			third = append(third, h.later[1])
		}
	}
	fmt.Fprintf(&sb, "the same wake-up from a 2nd master: %d, after the first by p50 %s p90 %s p99 %s; from a 3rd: %d, p50 %s p90 %s p99 %s; from one master only: %d\n",
		len(second), q(second, 0.5), q(second, 0.9), q(second, 0.99), len(third), q(third, 0.5), q(third, 0.9), q(third, 0.99), none)
	var withExtra, without []int64
	for _, h := range hs {
		if h.extraRounds > 0 {
			withExtra = append(withExtra, h.gap)
		} else {
			without = append(without, h.gap)
		}
	}
	fmt.Fprintf(&sb, "gaps with extra rounds (a round before the winning one, after the release began): %d, p50 %s p99 %s max %s; without: %d, p50 %s p99 %s max %s\n",
		len(withExtra), q(withExtra, 0.5), q(withExtra, 0.99), q(withExtra, 1), len(without), q(without, 0.5), q(without, 0.99), q(without, 1))
	fmt.Fprintf(&sb, "gaps over twice the median (%d): the step furthest over its median: %v\n", over, dominant)
	for _, h := range long[:min(15, len(long))] {
		fmt.Fprintf(&sb, "gap %s %s->%s: to release %s, release %s %v, to wake-up %s (master %d), to pause end %s, to round %s, round %s %v, extra rounds %d, woken %v; overlapping: %s\n",
			us(h.gap), h.from, h.to, us(h.toRelease), us(h.releaseEnd), h.release, us(h.toWake), h.wakeNode, us(h.toAwaitEnd), us(h.toRound), us(h.round), h.roundLat, h.extraRounds, h.woken, strings.Join(h.others, "; "))
	}
	k := 0
	for _, h := range hs {
		if h.extraRounds > 0 && k < 12 {
			k++
			fmt.Fprintf(&sb, "extra: gap %s, release %v, wake-up at %s from %d; %s; winning round at %s %v\n", us(h.gap), h.release, us(h.toWake), h.wakeNode, strings.Join(h.extra, "; "), us(h.at+h.toRelease), h.roundLat)
		}
	}
	t.Log("\n" + sb.String())
}

// takeApart finds the steps between a's acquisition and b's.
func takeApart(a, b traced, byProc map[string][]trace.Record, all []traced) (handoff, bool) {
	h := handoff{from: a.proc, to: b.proc, at: a.End, gap: b.End - a.End, wakeNode: -1}
	var rel *trace.Record
	for i, r := range byProc[a.proc] {
		if r.Kind == "round" && r.Op == "release" && r.T >= a.End {
			rel = &byProc[a.proc][i]
			break
		}
	}
	if rel == nil || rel.T > b.End {
		return h, false
	}
	h.toRelease, h.release, h.releaseEnd = rel.T-a.End, rel.Lat, rel.End-rel.T
	var wake, await *trace.Record
	for i, r := range byProc[b.proc] {
		switch {
		case r.Kind == "wake" && r.Votes > 0 && r.T >= rel.T && r.T <= b.T && wake == nil:
			wake = &byProc[b.proc][i]
		case r.Kind == "await" && r.End <= b.T && r.End >= rel.T:
			await = &byProc[b.proc][i]
		case r.Kind == "round" && r.Op == "acquire" && r.T >= rel.T && r.End < b.End:
			h.extraRounds++
			h.extra = append(h.extra, fmt.Sprintf("round at %s votes %d %v", us(r.T-rel.T), r.Votes, r.Lat))
		case r.Kind != "round" && r.T >= rel.T && r.T < b.T && len(h.extra) > 0:
			h.extra = append(h.extra, fmt.Sprintf("%s %s at %s-%s %s", r.Kind, r.Note, us(r.T-rel.T), us(r.End-rel.T), us(r.Delay)))
		}
	}
	if wake == nil || await == nil {
		return h, false
	}
	h.toWake, h.wakeNode = wake.T-rel.T, wake.Node
	h.later = nil
	for _, r := range byProc[b.proc] {
		if r.Kind == "wake" && r.Note == wake.Note && r.T > wake.T {
			h.later = append(h.later, r.T-wake.T)
		}
	}
	if wake.Node >= 0 && wake.Node < len(rel.Lat) {
		h.wakeLag = wake.T - (rel.T + int64(rel.Lat[wake.Node])*1000)
	}
	h.toAwaitEnd = await.End - wake.T
	h.toRound = b.T - await.End
	h.woken = await.Note == "woken"
	h.round, h.roundLat = b.End-b.T, b.Lat
	for _, r := range all {
		if r.Kind == "round" && r.proc != b.proc && r.T < b.End && r.End > b.T {
			h.others = append(h.others, fmt.Sprintf("%s %s at %s %v", r.proc, r.Op, us(r.T-b.T), r.Lat))
		}
	}
	return h, true
}

func q(v []int64, p float64) string {
	if len(v) == 0 {
		return "-"
	}
	s := slices.Clone(v)
	slices.Sort(s)
	i := min(int(p*float64(len(s))), len(s)-1)
	return us(s[i])
}

func us(ns int64) string { return time.Duration(ns).Round(time.Microsecond).String() }
