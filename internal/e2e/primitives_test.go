package e2e

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Black-box tests of the coordination primitives through the built binary: real
// children under run and elect, their logs checked for what each primitive
// promises, with one master killed mid-run (four of five still form a quorum).

// runChildren starts n `run` processes with args, each running a child that
// holds for hold, all logging to file; it returns them.
func (e *env) runChildren(file, prefix string, n int, hold time.Duration, args ...string) []*background {
	e.t.Helper()
	var out []*background
	for i := range n {
		id := fmt.Sprintf("%s%d", prefix, i)
		argv := append(append([]string{"run"}, args...), "--")
		argv = append(argv, childArgv(e.t, id, file, hold)...)
		out = append(out, e.start(argv...))
	}
	return out
}

// waitOK waits for each process and requires exit 0.
func waitOK(t *testing.T, bs []*background, d time.Duration) {
	t.Helper()
	for _, b := range bs {
		code := b.wait(t, d)
		require.Equal(t, 0, code, "%v: stderr:\n%s", b.cmd.Args[1:], b.stderr)
	}
}

// The harness on the plain mutex: six runs of one name, a master killed while
// they queue; never two children at once, every child ran.
func TestBlackBoxRunMutexWithAMasterKilled(t *testing.T) {
	e := newEnv(t)
	file := logFile(t)
	runs := e.runChildren(file, "m", 6, 300*time.Millisecond, "mutex", "-ttl", "2s", "-wait", "60s")
	down := e.killMasterAfter(700 * time.Millisecond)
	waitOK(t, runs, 90*time.Second)
	<-down
	spans := readSpans(t, file)
	require.Len(t, spans, 6, "every child ran")
	n, at := maxConcurrent(spans)
	assert.Equal(t, 1, n, "children at once: %v", at)
	for _, s := range spans {
		assert.Equal(t, "done", s.Why, "%v ended by itself", s)
	}
}

// The control of the harness: the same children under distinct names do run at
// once, so a test that sees no overlap saw a lock at work, not a slow machine.
func TestBlackBoxHarnessSeesOverlapWithoutALock(t *testing.T) {
	e := newEnv(t)
	file := logFile(t)
	var runs []*background
	for i := range 3 {
		runs = append(runs, e.runChildren(file, fmt.Sprintf("u%d-", i), 1, 2*time.Second, fmt.Sprintf("free%d", i), "-wait", "10s")...)
	}
	waitOK(t, runs, 60*time.Second)
	n, _ := maxConcurrent(readSpans(t, file))
	assert.Equal(t, 3, n, "three unrelated names run at once")
}

// run -permits 2: six runs of one semaphore, a master killed while they queue;
// never three children at once, and two at once at some point.
func TestBlackBoxRunPermitsNeverThreeAndReachesTwo(t *testing.T) {
	e := newEnv(t)
	file := logFile(t)
	runs := e.runChildren(file, "p", 6, 700*time.Millisecond, "nightly", "-permits", "2", "-ttl", "2s", "-wait", "60s")
	down := e.killMasterAfter(900 * time.Millisecond)
	waitOK(t, runs, 90*time.Second)
	<-down
	spans := readSpans(t, file)
	require.Len(t, spans, 6, "every child ran")
	n, at := maxConcurrent(spans)
	assert.Equal(t, 2, n, "at most two children at once, and two reached: %v", at)
	slots := map[string]int{}
	for _, s := range spans {
		slots[s.Attrs["permit"]]++
	}
	assert.Subset(t, []string{"0", "1"}, keysOf(slots), "children learn their slot (REDLOCK_PERMIT)")
}

// run a b and run b c: overlapping name sets never run at once, whatever the
// order of names; a c and a b-free set do.
func TestBlackBoxRunSeveralNamesNeverOverlap(t *testing.T) {
	e := newEnv(t)
	file := logFile(t)
	var ab, bc []*background
	for i := range 3 {
		ab = append(ab, e.runChildren(file, fmt.Sprintf("ab%d-", i), 1, 400*time.Millisecond, "a", "b", "-ttl", "2s", "-wait", "60s")...)
		bc = append(bc, e.runChildren(file, fmt.Sprintf("bc%d-", i), 1, 400*time.Millisecond, "c", "b", "-ttl", "2s", "-wait", "60s")...)
	}
	down := e.killMasterAfter(600 * time.Millisecond)
	waitOK(t, append(ab, bc...), 90*time.Second)
	<-down
	spans := readSpans(t, file)
	require.Len(t, spans, 6, "every child ran")
	n, at := maxConcurrent(spans)
	assert.Equal(t, 1, n, "sets sharing b never run at once: %v", at)
	for _, s := range selectSpans(spans, "ab") {
		assert.Equal(t, "a,b", s.Attrs["names"], "REDLOCK_NAMES lists every name, sorted")
	}
	for _, k := range []string{"lock:a", "lock:b", "lock:c"} {
		assert.Empty(t, e.keys(k), "%s is released on every master", k)
	}
}

// keysOf returns the keys of m.
func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// run -shared: shared children overlap each other and never a plain run of the
// same name, which still gets in while new shared runs keep coming (it is not
// starved).
func TestBlackBoxRunSharedOverlapsButNeverAPlainRun(t *testing.T) {
	e := newEnv(t)
	file := logFile(t)
	// A stream of shared runs, one every 250ms for 5s, each child holding
	// 700ms: without a waiting exclusive holder there is always a shared one.
	var shared []*background
	var mu sync.Mutex
	streamDone := make(chan struct{})
	go func() {
		defer close(streamDone)
		for i := range 20 {
			b := e.runChildren(file, fmt.Sprintf("s%02d-", i), 1, 700*time.Millisecond, "doc", "-shared", "-ttl", "2s", "-wait", "60s")
			mu.Lock()
			shared = append(shared, b...)
			mu.Unlock()
			time.Sleep(250 * time.Millisecond)
		}
	}()
	time.Sleep(1200 * time.Millisecond)
	plain := e.runChildren(file, "x", 1, 300*time.Millisecond, "doc", "-ttl", "2s", "-wait", "30s")
	down := e.killMasterAfter(500 * time.Millisecond)
	waitOK(t, plain, 60*time.Second)
	<-streamDone
	<-down
	waitOK(t, shared, 90*time.Second)

	spans := readSpans(t, file)
	sh, ex := selectSpans(spans, "s"), selectSpans(spans, "x")
	require.Len(t, sh, 20, "every shared child ran")
	require.Len(t, ex, 1, "the plain run got in")
	n, _ := maxConcurrent(sh)
	assert.GreaterOrEqual(t, n, 2, "shared children run at once")
	assert.Empty(t, crossOverlaps(ex, sh), "a plain run never overlaps a shared one")
	after := 0
	for _, s := range sh {
		if s.Start > ex[0].End {
			after++
		}
	}
	assert.Positive(t, after, "the plain run got in while shared runs kept coming, not after the stream")
	for _, s := range sh {
		assert.Equal(t, "1", s.Attrs["shared"], "REDLOCK_SHARED=1")
	}
}

// elect: three candidates, one CMD at a time. The first leader's elect is
// killed (SIGKILL: the guard kills its CMD at once, the leadership expires with
// its TTL), a master is killed, the second leader's elect is stopped with
// SIGTERM (its CMD ends and it resigns). Terms increase, CMDs never overlap, and
// leader -watch shows each leader with its value and term.
func TestBlackBoxElectOneAtATimeAndLeaderWatchSeesEachChange(t *testing.T) {
	e := newEnv(t)
	file := logFile(t)
	watch := e.start("leader", "crond", "-watch", "-json")
	var cands []*background
	for i := range 3 {
		argv := append([]string{"elect", "crond", "-value", fmt.Sprintf("10.0.0.%d:8080", i+1), "-ttl", "2s", "--"},
			childArgv(t, fmt.Sprintf("e%d", i), file, 0)...)
		cands = append(cands, e.start(argv...))
	}
	// leaderAt waits until n children have started and returns the n-th.
	leaderAt := func(n int) span {
		t.Helper()
		var s []span
		require.Eventually(t, func() bool { s = readSpans(t, file); return len(s) >= n }, 30*time.Second, 10*time.Millisecond,
			"leader %d never started", n)
		return s[n-1]
	}
	candOf := func(s span) *background {
		i := int(s.ID[1] - '0')
		return cands[i]
	}
	// watched waits until leader -watch has shown s's leadership: each leader is
	// deposed only once the watch saw it, so the test asks "every change is
	// shown", not "a leadership of a few milliseconds is caught by a poll".
	watched := func(s span) {
		t.Helper()
		want := fmt.Sprintf(`"value":"10.0.0.%c:8080","term":%s,`, s.ID[1]+1, s.Attrs["term"])
		require.Eventually(t, func() bool { return strings.Contains(watch.stdout.String(), want) }, 10*time.Second, 10*time.Millisecond,
			"leader -watch never showed %s:\n%s", want, watch.stdout)
	}
	first := leaderAt(1)
	watched(first)
	require.NoError(t, candOf(first).cmd.Process.Signal(syscall.SIGKILL))
	firstGone := waitGone(t, first)
	e.c.Servers[len(e.c.Servers)-1].Kill()
	second := leaderAt(2)
	watched(second)
	require.NoError(t, candOf(second).cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, 0, candOf(second).wait(t, 30*time.Second), "a leader stopped with SIGTERM passes its CMD's status: %s", candOf(second).stderr)
	third := leaderAt(3)
	watched(third)
	require.NoError(t, candOf(third).cmd.Process.Signal(syscall.SIGTERM))
	candOf(third).wait(t, 30*time.Second)
	time.Sleep(300 * time.Millisecond) // the watch sees the resignation
	require.NoError(t, watch.cmd.Process.Signal(syscall.SIGINT))
	assert.Equal(t, 0, watch.wait(t, 10*time.Second), "leader -watch ends with 0 on Ctrl-C: %s", watch.stderr)

	spans := readSpans(t, file)
	t.Logf("children: %v\nleader -watch:\n%s", spans, watch.stdout)
	require.Len(t, spans, 3, "three leaders, one after another")
	spans[0].End = min(spans[0].End, firstGone) // SIGKILLed: it ended no later than seen gone
	n, at := maxConcurrent(spans)
	assert.Equal(t, 1, n, "one CMD at a time: %v", at)
	terms := []int64{}
	for _, s := range spans {
		term, err := strconv.ParseInt(s.Attrs["term"], 10, 64)
		require.NoError(t, err, "REDLOCK_TERM of %v", s)
		assert.Equal(t, s.Attrs["term"], s.Attrs["fence"], "REDLOCK_FENCE is the term")
		terms = append(terms, term)
	}
	assert.IsIncreasing(t, terms, "terms strictly increase")

	// leader -watch: every leader, with its value and term, in order.
	var seen []string
	for _, line := range strings.Split(strings.TrimSpace(watch.stdout.String()), "\n") {
		doc := checkDoc(t, "leader", line)
		if doc["leading"] == true {
			v := fmt.Sprintf("%v@%v", doc["value"], doc["term"])
			if len(seen) == 0 || seen[len(seen)-1] != v {
				seen = append(seen, v)
			}
		}
	}
	var want []string
	for i, s := range spans {
		want = append(want, fmt.Sprintf("10.0.0.%c:8080@%d", s.ID[1]+1, terms[i]))
	}
	assert.Equal(t, want, seen, "leader -watch showed each leader in turn")
}

// waitGone waits until the process of s's child is gone and returns the
// CLOCK_MONOTONIC time at which it was first seen gone.
func waitGone(t *testing.T, s span) int64 {
	t.Helper()
	pid, err := strconv.Atoi(s.Attrs["pid"])
	require.NoError(t, err)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if !alive(pid) || zombie(pid) {
			return monoNow()
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("child %s (pid %d) still runs 10s after its elect was killed", s.ID, pid)
	return 0
}

// zombie reports whether pid has exited and waits to be reaped.
func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] == "Z"
}
