package bench

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	experiment "github.com/redlock/redlock/internal/bench"
	"github.com/redlock/redlock/topology"
)

// explain describes the top longest calls of a run: their path, and what else
// happened meanwhile (the longest gap between two acquisitions by anyone, the
// benchmark process's longest late wake-up, garbage collections), with a verdict.
func (run pathsRun) explain(top int) string {
	type call struct {
		id string
		acqPath
	}
	var calls []call
	var starts []int64 // every acquisition's end, to find the gaps
	byRounds := map[string][]time.Duration{}
	for id, ps := range run.paths {
		for _, p := range ps {
			calls = append(calls, call{id, p})
			starts = append(starts, p.End)
			k := "1"
			switch {
			case p.Rounds == 0:
				k = "-"
			case p.Rounds == 2:
				k = "2"
			case p.Rounds > 2:
				k = "3+"
			}
			byRounds[k] = append(byRounds[k], time.Duration(p.End-p.Start))
		}
	}
	if len(calls) == 0 {
		return ""
	}
	slices.Sort(starts)
	slices.SortFunc(calls, func(a, b call) int { return int((b.End - b.Start) - (a.End - a.Start)) })
	var mean time.Duration
	for _, c := range calls {
		mean += time.Duration(c.End - c.Start)
	}
	mean /= time.Duration(len(calls))
	var sb strings.Builder
	fmt.Fprintf(&sb, "calls by rounds:")
	for _, k := range []string{"1", "2", "3+"} {
		if ws := byRounds[k]; len(ws) > 0 {
			fmt.Fprintf(&sb, "  %s round(s): %d (max %v)", k, len(ws), experiment.Round(slices.Max(ws)))
		}
	}
	late := time.Duration(0)
	for _, s := range run.stalls {
		late = max(late, s.late)
	}
	fmt.Fprintf(&sb, "\nidle probe: %d late wake-ups over 2 ms, the longest %v", len(run.stalls), experiment.Round(late))
	runAll, _ := run.runnableDuring(0, 0)
	fmt.Fprintf(&sb, "; runnable tasks on the machine: %.1f on average", runAll)
	if run.cpu.ok {
		fmt.Fprintf(&sb, "; the CPUs %v", run.cpu)
	}
	sb.WriteString("\n")
	if run.waited != "" {
		sb.WriteString(run.waited + "\n")
	}
	sb.WriteString(run.gaps(top))
	if q, ok := run.atQuorum(); ok {
		sb.WriteString(q)
	}
	for _, c := range calls[:min(top, len(calls))] {
		wait := time.Duration(c.End - c.Start)
		gap := time.Duration(0) // the longest time without any acquisition, within the call
		others := -1            // acquisitions by the others meanwhile (the call's own is counted in the loop)
		i, _ := slices.BinarySearch(starts, c.Start)
		prev := c.Start
		for ; i < len(starts) && starts[i] <= c.End; i++ {
			gap = max(gap, time.Duration(starts[i]-prev))
			prev = starts[i]
			others++
		}
		stalled := time.Duration(0) // the idle probe's lateness in all, during the call
		for _, s := range run.stalls {
			if s.end >= c.Start && s.end-int64(s.late) <= c.End {
				stalled += s.late
			}
		}
		busy, _ := run.runnableDuring(c.Start, c.End)
		var verdict string
		switch excess := wait - 2*mean; {
		case c.Errors > 0:
			verdict = "a master failed or timed out in a round"
		case stalled >= excess/2:
			verdict = "the machine: the idle probe stalled for most of the excess"
		case gap >= excess/2 && busy >= 1.5*runAll && busy >= 4:
			verdict = "the machine: nobody acquired while the runnable tasks were well above the run's mean"
		case gap >= excess/2 && c.GCs > 0:
			verdict = "nobody acquired; garbage collection in this process meanwhile"
		case gap >= excess/2:
			verdict = "nobody acquired, though the idle probe ran"
		case others <= len(run.paths)-1:
			verdict = "queue: behind the others, their handoffs slow"
		case c.Rounds == 0:
			verdict = "others went on: its retries lost every race"
		case wait < topology.DefaultRetryDelay-topology.DefaultRetryJitter:
			// Shorter than any retry delay: it slept none.
			verdict = "others went on: this waiter's rounds came late (its process, or its first round before it was queued)"
		case c.Rounds > 2:
			verdict = "others went on: this waiter's rounds failed or it missed wake-ups (retry delay)"
		default:
			verdict = "others went on: this waiter was not woken (retry delay)"
		}
		fmt.Fprintf(&sb, "%v %s: rounds %d, failed masters %d, GCs %d; meanwhile others acquired %d times, the longest gap %v, the idle probe was late by %v in all, %.1f runnable tasks: %s\n",
			experiment.Round(wait), c.id, c.Rounds, c.Errors, c.GCs, others, experiment.Round(gap), experiment.Round(stalled), busy, verdict)
	}
	return sb.String()
}

// gaps describes the gaps between one acquisition and the next by anyone (with
// the lock held for no time, a release follows each acquisition at once: the
// gaps are the handoffs): how many fall in each half millisecond, and the top
// longest with the rounds of the acquisition that ended each (2: the waiter's
// first round after its wake-up won) and how late the idle probe was meanwhile.
func (run pathsRun) gaps(top int) string {
	type end struct {
		at       int64
		id       string
		rounds   int
		last     []int32
		released int64
	}
	var ends []end
	for id, ps := range run.paths {
		for _, p := range ps {
			ends = append(ends, end{p.End, id, p.Rounds, p.Last, p.Released})
		}
	}
	if len(ends) < 2 {
		return ""
	}
	slices.SortFunc(ends, func(a, b end) int { return int(a.at - b.at) })
	type gap struct {
		d    time.Duration
		prev end
		next end
	}
	var gs []gap
	const bucket, buckets = 500 * time.Microsecond, 6
	var hist [buckets + 1]int
	for i := 1; i < len(ends); i++ {
		g := gap{time.Duration(ends[i].at - ends[i-1].at), ends[i-1], ends[i]}
		gs = append(gs, g)
		hist[min(int(g.d/bucket), buckets)]++
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "gaps between acquisitions:")
	for i, n := range hist[:buckets] {
		fmt.Fprintf(&sb, " %v-%v: %d,", time.Duration(i)*bucket, time.Duration(i+1)*bucket, n)
	}
	fmt.Fprintf(&sb, " over %v: %d\n", buckets*bucket, hist[buckets])
	slices.SortFunc(gs, func(a, b gap) int { return int(b.d - a.d) })
	var long []span
	for _, g := range gs {
		if g.d > buckets*bucket {
			long = append(long, span{g.prev.at, g.next.at})
		}
	}
	sb.WriteString(run.queuedInGaps(gs[len(gs)/2].d, long))
	for _, g := range gs[:min(top, len(gs))] {
		stalled := time.Duration(0)
		for _, s := range run.stalls {
			if s.end >= g.prev.at && s.end-int64(s.late) <= g.next.at {
				stalled += s.late
			}
		}
		rel := ""
		if g.prev.released > 0 {
			rel = fmt.Sprintf("; %s's release returned %v after its acquisition", g.prev.id, experiment.Round(time.Duration(g.prev.released-g.prev.at)))
		}
		queued := ""
		if names, _ := queuedDuring(run.qwait, g.prev.at, g.next.at); names != "" {
			queued = "; waiting on a run queue meanwhile: " + names
		}
		fmt.Fprintf(&sb, "  a gap of %v, ended by %s's acquisition in %d round(s); the idle probe late by %v meanwhile%s%s%s\n",
			experiment.Round(g.d), g.next.id, g.next.rounds, experiment.Round(stalled), rel, lastRound(g.d, g.next.last), queued)
	}
	return sb.String()
}

// TestExplainTellsTheCauses: the verdicts of the wait report on made-up runs of
// two processes, each wait 1 ms but one.
func TestExplainTellsTheCauses(t *testing.T) {
	const ms = int64(time.Millisecond)
	// steady returns n calls of 1 ms, one after the other from at.
	steady := func(at int64, n int) []acqPath {
		var ps []acqPath
		for i := range n {
			ps = append(ps, acqPath{Start: at + int64(i)*ms, End: at + int64(i+1)*ms, Rounds: 2})
		}
		return ps
	}
	tests := []struct {
		name   string
		long   acqPath
		others []acqPath
		stalls []stall
		want   string
		gap    string // in the line of the longest gap
	}{
		{"a master timed out", acqPath{Start: 0, End: 300 * ms, Rounds: 2, Errors: 1}, steady(0, 300), nil,
			"a master failed or timed out", "a gap of 1ms, ended by p2's acquisition in 2 round(s)"},
		{"everyone stopped and the idle probe too", acqPath{Start: 0, End: 300 * ms, Rounds: 2}, append(steady(0, 1), steady(290*ms, 10)...),
			[]stall{{end: 280 * ms, late: 270 * time.Millisecond}}, "the machine", "a gap of 290ms, ended by p2's acquisition in 2 round(s); the idle probe late by 270ms"},
		{"others went on, this one lost its wake-ups", acqPath{Start: 0, End: 300 * ms, Rounds: 5}, steady(0, 300), nil,
			"this waiter's rounds failed or it missed wake-ups", "a gap of 1ms"},
		{"overtaken in less than a retry delay", acqPath{Start: 0, End: 30 * ms, Rounds: 2}, steady(0, 30), nil,
			"this waiter's rounds came late", "a gap of 1ms"},
		{"everyone stopped, the probe ran", acqPath{Start: 0, End: 300 * ms, Rounds: 2}, append(steady(0, 1), steady(290*ms, 10)...), nil,
			"nobody acquired, though the idle probe ran", "a gap of 290ms, ended by p2's acquisition in 2 round(s); the idle probe late by 0s"},
		{"a release that took long", acqPath{Start: 0, End: 300 * ms, Rounds: 2}, append(releasedAfter(steady(0, 1), 280*time.Millisecond), steady(290*ms, 10)...), nil,
			"nobody acquired, though the idle probe ran", "the idle probe late by 0s meanwhile; p2's release returned 280ms after its acquisition"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := pathsRun{paths: map[string][]acqPath{"p1": {tt.long}, "p2": tt.others}, stalls: tt.stalls}
			out := run.explain(1)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			require.Len(t, lines, 5, out)
			assert.True(t, strings.HasPrefix(lines[2], "gaps between acquisitions:"), out)
			assert.Contains(t, lines[3], tt.gap, "the longest gap between acquisitions")
			assert.True(t, strings.HasPrefix(lines[4], time.Duration(tt.long.End-tt.long.Start).String()+" p1:"), out)
			assert.Contains(t, lines[4], tt.want)
		})
	}
}

// atQuorum estimates the run's waits had every winning round returned once a
// quorum of its masters had answered rather than all of them: each wait loses,
// for every acquisition that ended within it (its own included), the time between
// that acquisition's round's quorum-th reply and its last. An estimate: the
// replies are read in the masters' order, so one read late may have come early.
func (run pathsRun) atQuorum() (string, bool) {
	type acq struct{ end, cut int64 }
	var acqs []acq
	var calls []acqPath
	rounds := false
	for _, ps := range run.paths {
		for _, p := range ps {
			calls = append(calls, p)
			var cut int64
			if n := len(p.Last); n > 0 {
				rounds = true
				l := slices.Sorted(slices.Values(p.Last))
				cut = int64(l[n-1]-l[n/2]) * int64(time.Microsecond)
			}
			acqs = append(acqs, acq{p.End, cut})
		}
	}
	if !rounds {
		return "", false
	}
	slices.SortFunc(acqs, func(a, b acq) int { return int(a.end - b.end) })
	sum := make([]int64, len(acqs)+1) // sum[i]: the cuts of acqs[:i]
	for i, a := range acqs {
		sum[i+1] = sum[i] + a.cut
	}
	var total, worst, now, nowWorst int64
	for _, c := range calls {
		i, _ := slices.BinarySearchFunc(acqs, c.Start, func(a acq, t int64) int { return int(a.end - t) })
		j, _ := slices.BinarySearchFunc(acqs, c.End+1, func(a acq, t int64) int { return int(a.end - t) })
		w := c.End - c.Start - (sum[j] - sum[i])
		total += w
		worst = max(worst, w)
		now += c.End - c.Start
		nowWorst = max(nowWorst, c.End-c.Start)
	}
	mean, nowMean := total/int64(len(calls)), now/int64(len(calls))
	return fmt.Sprintf("rounds returning at their quorum, estimated: max / mean wait %v / %v (%.2f) against %v / %v (%.2f)\n",
		experiment.Round(time.Duration(worst)), experiment.Round(time.Duration(mean)), float64(worst)/float64(mean),
		experiment.Round(time.Duration(nowWorst)), experiment.Round(time.Duration(nowMean)), float64(nowWorst)/float64(nowMean)), true
}

// TestAtQuorumCutsTheSlowMinority: two processes, one wait of 10 ms that holds
// the other's acquisition whose round read three masters at 100 µs and two at
// 5.1 ms: returned at its quorum, both calls lose 5 ms.
func TestAtQuorumCutsTheSlowMinority(t *testing.T) {
	const ms = int64(time.Millisecond)
	run := pathsRun{paths: map[string][]acqPath{
		"p1": {{Start: 0, End: 10 * ms, Last: []int32{100, 100, 100, 100, 100}}},
		"p2": {{Start: 0, End: 6 * ms, Last: []int32{5100, 100, 100, 5100, 100}}},
	}}
	out, ok := run.atQuorum()
	require.True(t, ok)
	assert.Equal(t, "rounds returning at their quorum, estimated: max / mean wait 5ms / 3ms (1.67) against 10ms / 8ms (1.25)\n", out)
	_, ok = pathsRun{paths: map[string][]acqPath{"p1": {{Start: 0, End: ms}}}}.atQuorum()
	assert.False(t, ok, "no round recorded: no estimate")
}

// releasedAfter returns ps with each call's release returning d after its acquisition.
func releasedAfter(ps []acqPath, d time.Duration) []acqPath {
	for i := range ps {
		ps[i].Released = ps[i].End + int64(d)
	}
	return ps
}

// lastRound describes the winning round of a gap of d: its masters' latencies,
// and what of the gap came before the round began (the release, the wake-up's
// delivery, the waiter's scheduling) when the round's slowest master is taken as
// its length.
func lastRound(d time.Duration, lat []int32) string {
	if len(lat) == 0 {
		return ""
	}
	sorted := slices.Sorted(slices.Values(lat))
	slowest := time.Duration(sorted[len(sorted)-1]) * time.Microsecond
	return fmt.Sprintf("; its round's masters answered in %v µs (in order), so %v of the gap came before the round",
		sorted, experiment.Round(max(d-slowest, 0)))
}
