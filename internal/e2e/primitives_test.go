package e2e

import (
	"fmt"
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
