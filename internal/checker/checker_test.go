package checker

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOverlaps(t *testing.T) {
	tests := []struct {
		name string
		iv   []Interval
		want int
	}{
		{"disjoint", []Interval{{"a", "x", 0, 10}, {"b", "x", 10, 20}}, 0},
		{"overlap", []Interval{{"a", "x", 0, 10}, {"b", "x", 9, 20}}, 1},
		{"same owner", []Interval{{"a", "x", 0, 10}, {"a", "x", 5, 20}}, 0},
		{"other lock", []Interval{{"a", "x", 0, 10}, {"b", "y", 5, 20}}, 0},
		{"long one spans later ones", []Interval{{"a", "x", 0, 100}, {"b", "x", 10, 20}, {"c", "x", 30, 40}}, 2},
		{"unsorted input", []Interval{{"b", "x", 9, 20}, {"a", "x", 0, 10}}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Len(t, Overlaps(tt.iv), tt.want)
		})
	}
}

func TestRecorderClipsAtReleaseAndCountsExtensions(t *testing.T) {
	r := New(7)
	t0 := r.base
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	a := r.Acquired("A", "x", at(0), at(100))
	a.Extended(at(50), at(200))
	a.Released(at(120))
	b := r.Acquired("B", "x", at(130), at(300))
	b.Released(at(140))
	assert.Empty(t, r.Violations(), "release at 120 clips the extension")

	c := r.Acquired("C", "x", at(135), at(150)) // inside B's hold
	_ = c
	v := r.Violations()
	require.Len(t, v, 1)
	assert.Equal(t, KindOverlap, v[0].Kind)
	assert.Contains(t, v[0].Detail, "B")
	assert.Contains(t, v[0].Detail, "C")
}

// A hold ends when its holder saw Done or called Release, whichever came first,
// not at the deadline the library reported: a Done that fires late keeps the
// holder working past the deadline, and that is what the checker must see.
func TestHoldEndsWhenTheHolderSawDone(t *testing.T) {
	at := func(r *Recorder, ms int) time.Time { return r.base.Add(time.Duration(ms) * time.Millisecond) }
	tests := []struct {
		name  string
		do    func(r *Recorder)
		kinds []string
	}{
		{"done at the deadline, rival after it", func(r *Recorder) {
			a := r.Acquired("A", "x", at(r, 0), at(r, 100))
			a.Done(at(r, 100), at(r, 100))
			r.Acquired("B", "x", at(r, 105), at(r, 200))
		}, nil},
		{"done before the deadline", func(r *Recorder) {
			a := r.Acquired("A", "x", at(r, 0), at(r, 100))
			a.Done(at(r, 60), at(r, 100))
			r.Acquired("B", "x", at(r, 70), at(r, 200))
		}, nil},
		{"done within the slack", func(r *Recorder) {
			a := r.Acquired("A", "x", at(r, 0), at(r, 100))
			a.Done(at(r, 100).Add(DoneSlack), at(r, 100))
		}, nil},
		{"late done overlaps a rival that came after the deadline", func(r *Recorder) {
			a := r.Acquired("A", "x", at(r, 0), at(r, 100))
			r.Acquired("B", "x", at(r, 110), at(r, 200))
			a.Done(at(r, 140), at(r, 100))
		}, []string{KindOverlap, KindLateDone}},
		{"release before done ends the hold", func(r *Recorder) {
			a := r.Acquired("A", "x", at(r, 0), at(r, 100))
			a.Released(at(r, 50))
			a.Done(at(r, 51), at(r, 100))
			r.Acquired("B", "x", at(r, 60), at(r, 200))
		}, nil},
		{"extensions move the deadline", func(r *Recorder) {
			a := r.Acquired("A", "x", at(r, 0), at(r, 100))
			a.Extended(at(r, 50), at(r, 150))
			a.Done(at(r, 150), at(r, 150))
			r.Acquired("B", "x", at(r, 120), at(r, 200))
		}, []string{KindOverlap}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := New(1)
			tt.do(r)
			var kinds []string
			for _, v := range r.Violations() {
				kinds = append(kinds, v.Kind)
			}
			assert.ElementsMatch(t, tt.kinds, kinds)
		})
	}
}

func TestChecks(t *testing.T) {
	now := time.Now()
	tests := []struct {
		name string
		do   func(r *Recorder)
		kind string
	}{
		{"bound ok", func(r *Recorder) {
			r.Bound("A", now, now, now.Add(988*time.Millisecond), time.Second, 12*time.Millisecond)
		}, ""},
		{"bound from a round that started later", func(r *Recorder) {
			r.Bound("A", now, now.Add(30*time.Millisecond), now.Add(1018*time.Millisecond), time.Second, 12*time.Millisecond)
		}, ""},
		{"bound from a round that started before the call", func(r *Recorder) {
			r.Bound("A", now, now.Add(-time.Millisecond), now.Add(987*time.Millisecond), time.Second, 12*time.Millisecond)
		}, KindBound},
		{"bound slack", func(r *Recorder) {
			r.Bound("A", now, now, now.Add(988*time.Millisecond+BoundSlack), time.Second, 12*time.Millisecond)
		}, ""},
		{"bound broken", func(r *Recorder) { r.Bound("A", now, now, now.Add(time.Second), time.Second, 12*time.Millisecond) }, KindBound},
		{"typed failure", func(r *Recorder) { r.Failure("A", "acquire", errors.New("x"), true) }, ""},
		{"untyped failure", func(r *Recorder) { r.Failure("A", "acquire", errors.New("x"), false) }, KindUntyped},
		{"ttl ok", func(r *Recorder) { r.Keys("a", map[string]time.Duration{"lock:x": time.Second}, false) }, ""},
		{"no ttl", func(r *Recorder) { r.Keys("a", map[string]time.Duration{"lock:x": -1}, false) }, KindNoTTL},
		{"leftover", func(r *Recorder) { r.Keys("a", map[string]time.Duration{"lock:x": time.Second}, true) }, KindLeftover},
		{"foreign untouched", func(r *Recorder) { r.Foreign("a", "lock:x", "v", "v") }, ""},
		{"foreign touched", func(r *Recorder) { r.Foreign("a", "lock:x", "rl1.secret-token", "") }, KindForeign},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := New(1)
			tt.do(r)
			v := r.Violations()
			if tt.kind == "" {
				assert.Empty(t, v)
				return
			}
			require.Len(t, v, 1)
			assert.Equal(t, tt.kind, v[0].Kind)
			assert.NotContains(t, v[0].Detail, "secret-token", "values are redacted")
		})
	}
}

type fakeTB struct {
	dir    string
	errors []string
}

func (f *fakeTB) Helper()                        {}
func (f *fakeTB) Name() string                   { return "TestX/sub" }
func (f *fakeTB) Errorf(format string, a ...any) { f.errors = append(f.errors, format) }
func (f *fakeTB) Logf(string, ...any)            {}
func (f *fakeTB) TempDir() string                { return f.dir }

func TestReportWritesHistoryAndSeed(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("REDLOCK_HISTORY_DIR", dir)
	r := New(42)
	now := time.Now()
	r.Acquired("A", "x", now, now.Add(time.Second))
	r.Acquired("B", "x", now.Add(time.Millisecond), now.Add(time.Second))
	r.Event("fault: kill %s", "c")
	f := &fakeTB{dir: t.TempDir()}
	require.Len(t, r.Report(f), 1)
	require.NotEmpty(t, f.errors)
	b, err := os.ReadFile(filepath.Join(dir, "TestX_sub.json"))
	require.NoError(t, err)
	var h History
	require.NoError(t, json.Unmarshal(b, &h))
	assert.Equal(t, int64(42), h.Seed)
	assert.Len(t, h.Holds, 2)
	assert.Len(t, h.Events, 1)
	assert.Equal(t, KindOverlap, h.Violations[0].Kind)

	clean := New(1)
	f2 := &fakeTB{dir: t.TempDir()}
	assert.Empty(t, clean.Report(f2))
	assert.Empty(t, f2.errors)
}

// TestLateDoneAllowsOnlyTheMeasuredSchedulingLag: a Done seen late is excused only
// by the probe's own timers being at least as late in the same window, never by a
// lag measured at another moment.
func TestLateDoneAllowsOnlyTheMeasuredSchedulingLag(t *testing.T) {
	tests := []struct {
		name  string
		lags  []lagSample
		kinds []string
	}{
		{"no probe samples", nil, []string{KindLateDone}},
		{"the machine starved the test then", []lagSample{{due: 101, late: 50 * time.Millisecond}}, nil},
		{"the machine starved the test, but less", []lagSample{{due: 101, late: 10 * time.Millisecond}}, []string{KindLateDone}},
		{"starved at another moment", []lagSample{{due: 400, late: time.Second}, {due: 20, late: 70 * time.Millisecond}}, []string{KindLateDone}},
		{"a stall that began before the deadline and outlasted it", []lagSample{{due: 20, late: time.Second}}, nil},
		{"a stall that began before the deadline and ended soon after it", []lagSample{{due: 20, late: 90 * time.Millisecond}}, []string{KindLateDone}},
		{"two stalls, together as long", []lagSample{{due: 96, late: 25 * time.Millisecond}, {due: 126, late: 20 * time.Millisecond}}, nil},
		{"a stall after Done was seen", []lagSample{{due: 161, late: time.Second}}, []string{KindLateDone}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := New(1)
			r.lags = tt.lags
			at := func(ms int) time.Time { return r.base.Add(time.Duration(ms) * time.Millisecond) }
			a := r.Acquired("A", "x", at(0), at(100))
			a.Done(at(160), at(100))
			var kinds []string
			for _, v := range r.Violations() {
				kinds = append(kinds, v.Kind)
			}
			assert.Equal(t, tt.kinds, kinds)
		})
	}
}

// TestBugLateDoneWhenTheProcessStalledAroundTheDeadline: under -race on a loaded
// machine (2026-11, TestPrimitiveScenarios) Done was reported late although the
// probe had measured the stall that delayed it, in three ways, each a timeline
// recorded then (ms since the start):
//   - a stall that began before the window: the probe's wake-up due at 1976.5 came
//     at 2140.1, the lock's expiry due at 2095.7 fired at 2140.0, Done was seen at
//     2140.4, and the stall was taken for another moment;
//   - two stalls back to back: a wake-up due at 1277.8 came at 1428.0, the next one
//     due at 1433.0 came at 1452.5; the expiry due at 1357.4 fired at 1430.7 and
//     closed Done at 1452.5, seen at 1458.3. The longer stall alone (75.6ms in the
//     window) did not cover the 100.9ms;
//   - a stall still in progress when the history was checked: its wake-up was
//     never recorded.
//
// Once the process runs freely again, a late Done is still caught.
func TestBugLateDoneWhenTheProcessStalledAroundTheDeadline(t *testing.T) {
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	before := []lagSample{{due: 1965.1, late: ms(0.9)}, {due: 1970.9, late: ms(0.6)}, {due: 1976.5, late: ms(163.6)}, {due: 2145.2, late: ms(0.3)}}
	twice := []lagSample{{due: 1269.5, late: ms(3.3)}, {due: 1277.8, late: ms(150.2)}, {due: 1433.0, late: ms(19.5)}, {due: 1457.5, late: ms(0.7)}, {due: 1463.3, late: ms(1.6)}}
	tests := []struct {
		name                  string
		lags                  []lagSample
		pending               *lagSample
		acquired, until, seen float64
		kinds                 []string
	}{
		{"a stall that began before the window", before, nil, 1821.7, 2095.7, 2140.4, nil},
		{"seen long after that stall ended", before, nil, 1821.7, 2095.7, 2200, []string{KindLateDone}},
		{"two stalls back to back", twice, nil, 1092.2, 1357.4, 1458.3, nil},
		{"seen long after those stalls ended", twice, nil, 1092.2, 1357.4, 1530, []string{KindLateDone}},
		{"a stall still in progress", before[:2], &lagSample{due: 1976.5}, 1821.7, 2095.7, 2140.4, nil},
		{"a wake-up awaited but not yet due", before, &lagSample{due: 1e9}, 1821.7, 2095.7, 2200, []string{KindLateDone}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := New(1)
			r.base = time.Now().Add(-3 * time.Second) // the history is checked at 3000ms
			r.lags, r.pending = tt.lags, tt.pending
			at := func(v float64) time.Time { return r.base.Add(ms(v)) }
			a := r.Acquired("A", "prim/sem", at(tt.acquired), at(tt.until))
			a.Done(at(tt.seen), at(tt.until))
			var kinds []string
			for _, v := range r.Violations() {
				kinds = append(kinds, v.Kind)
			}
			assert.Equal(t, tt.kinds, kinds)
		})
	}
}

// TestLateDoneExcusedByTheHoldsOwnTimer: a timer armed at the hold's deadline
// that fired as late as Done excuses it, even where the probe's timer (on another
// of the process's schedulers) was on time; one that fired on time does not (2026-11:
// the probe ran on time from 2024 to 2065ms while a semaphore holder's expiry due
// at 2024.0ms fired at 2114.4ms).
func TestLateDoneExcusedByTheHoldsOwnTimer(t *testing.T) {
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	var onTime []lagSample
	for due := 2019.3; due < 2120; due += 5.2 {
		onTime = append(onTime, lagSample{due: due, late: ms(0.2)})
	}
	tests := []struct {
		name  string
		fired float64
		kinds []string
	}{
		{"the hold's timer as late as Done", 2114.4, nil},
		{"the hold's timer on time", 2024.1, []string{KindLateDone}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := New(1)
			r.lags = onTime
			at := func(v float64) time.Time { return r.base.Add(ms(v)) }
			b := r.Acquired("B", "prim/sem", at(1747.4), at(2024.0))
			b.TimerLate(at(2024.0), at(tt.fired))
			b.Done(at(2114.7), at(2024.0))
			var kinds []string
			for _, v := range r.Violations() {
				kinds = append(kinds, v.Kind)
			}
			assert.Equal(t, tt.kinds, kinds)
		})
	}
}

// TestBugLateDoneWhenAThreadOfTheProcessWaitedOnARunQueue (CI, 2026-11-27: "C:
// Done of scenario/resource seen 32.986ms after its deadline (the test process's
// timers were late by 7.294893ms then)"): the probe's and the hold's timers ran
// on time while the thread that held the expiry's processor waited on the
// machine's run queue. A thread's wait in the window excuses as much lateness,
// never more; a wait outside the window excuses nothing.
func TestBugLateDoneWhenAThreadOfTheProcessWaitedOnARunQueue(t *testing.T) {
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	var onTime []lagSample
	for due := 995.0; due < 1040; due += 5 {
		onTime = append(onTime, lagSample{due: due, late: ms(0.3)})
	}
	tests := []struct {
		name  string
		waits []threadWait
		kinds []string
	}{
		{"no thread waited", nil, []string{KindLateDone}},
		{"one thread waited 25ms in the window", []threadWait{{tid: 7, prev: 1025, at: 1030, d: ms(25)}}, nil},
		{"one thread's waits in the window add up", []threadWait{
			{tid: 7, prev: 1005, at: 1010, d: ms(8)}, {tid: 7, prev: 1020, at: 1025, d: ms(9)}}, nil},
		{"two threads' waits do not add up", []threadWait{
			{tid: 7, prev: 1005, at: 1010, d: ms(9)}, {tid: 8, prev: 1020, at: 1025, d: ms(9)}}, []string{KindLateDone}},
		{"a wait that ended before the window", []threadWait{{tid: 7, prev: 960, at: 965, d: ms(30)}}, []string{KindLateDone}},
		{"a wait read after Done was seen, begun after it", []threadWait{{tid: 7, prev: 1035, at: 1040, d: ms(4)}}, []string{KindLateDone}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := New(1)
			r.lags = onTime
			r.threadWaits = tt.waits
			at := func(v float64) time.Time { return r.base.Add(ms(v)) }
			c := r.Acquired("C", "scenario/resource", at(600), at(1000))
			c.TimerLate(at(1000), at(1000.4))
			c.Done(at(1033), at(1000))
			var kinds []string
			for _, v := range r.Violations() {
				kinds = append(kinds, v.Kind)
			}
			assert.Equal(t, tt.kinds, kinds)
		})
	}
}

// TestProbeSchedulingRecordsAndStops: the probe samples while it runs and its stop
// waits for it (no goroutine left behind).
func TestProbeSchedulingRecordsAndStops(t *testing.T) {
	r := New(1)
	stop := r.ProbeScheduling()
	time.Sleep(30 * time.Millisecond)
	stop()
	stop() // idempotent
	r.mu.Lock()
	n := len(r.lags)
	r.mu.Unlock()
	assert.Positive(t, n)
	time.Sleep(20 * time.Millisecond)
	r.mu.Lock()
	defer r.mu.Unlock()
	assert.Equal(t, n, len(r.lags), "no samples after stop")
}

// Regression (CI, 2026-11-25: "more-holders-than-permits: lock prim/sem: 3 holders
// at 1214.1 ms (limit 2)" with no late Done reported): a holder's Done seen late
// because the whole test process stalled across its deadline made the hold end
// after an acquisition that the same stall's end let through first. The measured
// stall now comes off the hold's end, never past its deadline; lateness no stall
// explains still overlaps.
func TestBugOverlapCountedFromADoneTheProcessStallDelayed(t *testing.T) {
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	stall := []lagSample{{due: 1190, late: ms(0.4)}, {due: 1195.5, late: ms(59.5)}, {due: 1260, late: ms(0.3)}}
	part := []lagSample{{due: 1190, late: ms(0.4)}, {due: 1195.5, late: ms(0.2)}, {due: 1220, late: ms(20)}, {due: 1245, late: ms(0.3)}}
	tests := []struct {
		name     string
		lags     []lagSample
		seen, b  float64 // A's Done seen; B's acquisition returned
		overlaps bool
		lateDone bool
	}{
		{"the stall explains the late Done", stall, 1260, 1256, false, false},
		{"no stall: the late Done overlaps", nil, 1260, 1256, true, true},
		{"a stall explains part of it", part, 1260, 1235, true, true},
		{"B before A's deadline overlaps whatever the stall", stall, 1260, 1199, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := New(1)
			r.base = time.Now().Add(-3 * time.Second)
			r.lags = tt.lags
			at := func(v float64) time.Time { return r.base.Add(ms(v)) }
			a := r.Acquired("A", "prim/x", at(1000), at(1200))
			a.Done(at(tt.seen), at(1200))
			r.Acquired("B", "prim/x", at(tt.b), at(tt.b+200))
			var overlap, late bool
			for _, v := range r.Violations() {
				overlap = overlap || v.Kind == KindOverlap
				late = late || v.Kind == KindLateDone
			}
			assert.Equal(t, tt.overlaps, overlap, "overlap")
			assert.Equal(t, tt.lateDone, late, "late Done")
		})
	}
}
