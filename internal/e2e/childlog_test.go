package e2e

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The black-box harness of the coordination primitives: real child processes,
// started by the built binary (run, elect), that log when they start and end,
// and a checker over those logs. What the checker proves is what the user relies
// on: the children's own view of when they ran.
//
// A child is this test binary again (childArg as its first argument). It appends
// "start ID NANOS key=value..." when it begins and "end ID NANOS why" when it
// stops, each line in one write(2) to a file opened O_APPEND, NANOS being
// CLOCK_MONOTONIC (one clock for every process of the machine, never stepped).
// A child starts after its lock was acquired and ends before it is released, so
// the logged span lies inside the hold: two logged spans that overlap are two
// holds that overlapped. A child that was SIGKILLed never logs its end: its span
// stays open to the end of time, which can only make the checker stricter.

// childArg is the first argument that turns the test binary into a child.
const childArg = "redlock-e2e-child"

// childMain is a child: childArg ID FILE HOLD. It logs its start, holds for HOLD
// (0: until SIGTERM), logs its end and exits 0; on SIGTERM it logs "end ID NANOS
// term" and exits 0 at once.
func childMain(args []string) int {
	if len(args) != 3 {
		fmt.Fprintln(os.Stderr, "child: want ID FILE HOLD")
		return 2
	}
	id, file := args[0], args[1]
	hold, err := time.ParseDuration(args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM, syscall.SIGINT)
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	defer f.Close()
	attrs := []string{"pid=" + strconv.Itoa(os.Getpid())}
	for _, k := range []string{"REDLOCK_NAME", "REDLOCK_FENCE", "REDLOCK_TERM", "REDLOCK_VALUE", "REDLOCK_PERMIT", "REDLOCK_PERMITS", "REDLOCK_NAMES", "REDLOCK_SHARED"} {
		if v, ok := os.LookupEnv(k); ok {
			attrs = append(attrs, strings.ToLower(strings.TrimPrefix(k, "REDLOCK_"))+"="+strings.ReplaceAll(v, " ", ","))
		}
	}
	if tok := os.Getenv("REDLOCK_TOKEN"); tok != "" {
		attrs = append(attrs, "token="+shortToken(tok))
	}
	_, _ = f.WriteString(fmt.Sprintf("start %s %d %s\n", id, monoNow(), strings.Join(attrs, " ")))
	var timer <-chan time.Time
	if hold > 0 {
		timer = time.After(hold)
	}
	why := "done"
	select {
	case <-timer:
	case <-term:
		why = "term"
	}
	_, _ = f.WriteString(fmt.Sprintf("end %s %d %s\n", id, monoNow(), why))
	return 0
}

// shortToken is enough of a token to tell holders apart in a log.
func shortToken(tok string) string {
	if i := strings.LastIndexByte(tok, '.'); strings.HasPrefix(tok, "rl1.") && i > 4 {
		tok = tok[4:i]
	}
	return tok[:min(len(tok), 10)]
}

// monoNow is CLOCK_MONOTONIC in nanoseconds.
func monoNow() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(err)
	}
	return ts.Nano()
}

// childArgv is the command line that starts a child logging to file.
func childArgv(t *testing.T, id, file string, hold time.Duration) []string {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	return []string{self, childArg, id, file, hold.String()}
}

// span is one child's run as it logged it.
type span struct {
	ID         string
	Start, End int64 // CLOCK_MONOTONIC ns; End is math.MaxInt64 when the child never logged it
	Why        string
	Attrs      map[string]string
}

func (s span) String() string {
	end := "never"
	if s.End != math.MaxInt64 {
		end = strconv.FormatInt(s.End, 10)
	}
	return fmt.Sprintf("%s[%d..%s %s]", s.ID, s.Start, end, s.Why)
}

// overlaps reports whether two spans share an instant.
func (s span) overlaps(o span) bool { return s.Start < o.End && o.Start < s.End }

// parseSpans reads a child log. A line it cannot read, an end without a start
// or a second start of one id is an error: the log is the evidence.
func parseSpans(log string) ([]span, error) {
	byID := map[string]*span{}
	var order []string
	for i, line := range strings.Split(strings.TrimSpace(log), "\n") {
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 3 {
			return nil, fmt.Errorf("line %d: %q: too short", i+1, line)
		}
		at, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: %q: %w", i+1, line, err)
		}
		id := f[1]
		switch f[0] {
		case "start":
			if byID[id] != nil {
				return nil, fmt.Errorf("line %d: %s started twice", i+1, id)
			}
			s := &span{ID: id, Start: at, End: math.MaxInt64, Attrs: map[string]string{}}
			for _, kv := range f[3:] {
				k, v, _ := strings.Cut(kv, "=")
				s.Attrs[k] = v
			}
			byID[id] = s
			order = append(order, id)
		case "end":
			s := byID[id]
			if s == nil {
				return nil, fmt.Errorf("line %d: %s ended without a start", i+1, id)
			}
			if s.End != math.MaxInt64 {
				return nil, fmt.Errorf("line %d: %s ended twice", i+1, id)
			}
			if at < s.Start {
				return nil, fmt.Errorf("line %d: %s ended before it started", i+1, id)
			}
			s.End = at
			if len(f) > 3 {
				s.Why = f[3]
			}
		default:
			return nil, fmt.Errorf("line %d: %q: unknown event", i+1, line)
		}
	}
	out := make([]span, 0, len(order))
	for _, id := range order {
		out = append(out, *byID[id])
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out, nil
}

// readSpans reads and parses the child log file (empty when no child ran).
func readSpans(t *testing.T, file string) []span {
	t.Helper()
	b, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	spans, err := parseSpans(string(b))
	require.NoError(t, err, "child log:\n%s", b)
	return spans
}

// maxConcurrent is the largest number of spans sharing one instant, and those
// spans. An end and a start at the same nanosecond do not count as shared.
func maxConcurrent(spans []span) (int, []span) {
	type edge struct {
		at    int64
		delta int
		i     int
	}
	var edges []edge
	for i, s := range spans {
		edges = append(edges, edge{s.Start, +1, i}, edge{s.End, -1, i})
	}
	sort.Slice(edges, func(a, b int) bool {
		if edges[a].at != edges[b].at {
			return edges[a].at < edges[b].at
		}
		return edges[a].delta < edges[b].delta // ends before starts
	})
	open := map[int]bool{}
	best, bestSet := 0, []span(nil)
	for _, e := range edges {
		if e.delta < 0 {
			delete(open, e.i)
			continue
		}
		open[e.i] = true
		if len(open) > best {
			best = len(open)
			bestSet = bestSet[:0]
			for i := range open {
				bestSet = append(bestSet, spans[i])
			}
		}
	}
	sort.Slice(bestSet, func(a, b int) bool { return bestSet[a].Start < bestSet[b].Start })
	return best, bestSet
}

// crossOverlaps returns every pair (a from as, b from bs, a != b) that overlaps.
func crossOverlaps(as, bs []span) [][2]span {
	var out [][2]span
	for _, a := range as {
		for _, b := range bs {
			if a.ID != b.ID && a.overlaps(b) {
				out = append(out, [2]span{a, b})
			}
		}
	}
	return out
}

// selectSpans returns the spans whose id starts with prefix.
func selectSpans(spans []span, prefix string) []span {
	var out []span
	for _, s := range spans {
		if strings.HasPrefix(s.ID, prefix) {
			out = append(out, s)
		}
	}
	return out
}

// background is a redlock process started by a test and not yet waited for.
type background struct {
	cmd    *exec.Cmd
	stderr *lockedBuffer
	stdout *lockedBuffer
	done   chan struct{}
	code   int
}

// start starts redlock with args in the background; the test's cleanup kills
// it if the test has not waited for it.
func (e *env) start(args ...string) *background {
	e.t.Helper()
	b := &background{cmd: e.command("", args...), stderr: &lockedBuffer{}, stdout: &lockedBuffer{}, done: make(chan struct{})}
	b.cmd.Stdout, b.cmd.Stderr = b.stdout, b.stderr
	require.NoError(e.t, b.cmd.Start())
	go func() {
		err := b.cmd.Wait()
		b.code = 0
		if ee, ok := err.(*exec.ExitError); ok {
			b.code = ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				b.code = 128 + int(ws.Signal())
			}
		} else if err != nil {
			b.code = -1
		}
		close(b.done)
	}()
	e.t.Cleanup(func() {
		select {
		case <-b.done:
		default:
			_ = b.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-b.done:
			case <-time.After(5 * time.Second):
				_ = b.cmd.Process.Kill()
				<-b.done
			}
		}
	})
	return b
}

// wait waits for the process to end (at most d) and returns its exit code.
func (b *background) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-b.done:
		return b.code
	case <-time.After(d):
		_ = b.cmd.Process.Kill()
		<-b.done
		t.Fatalf("%v did not end within %v; stderr:\n%s", b.cmd.Args[1:], d, b.stderr)
		return -1
	}
}

// lockedBuffer is a buffer that the exec package's copying goroutine writes
// while a test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// logFile is a fresh child log path.
func logFile(t *testing.T) string { return filepath.Join(t.TempDir(), "children.log") }

// killMasterAfter kills the last master after d, in the background: the
// "one master killed mid-run" of every black-box test. It returns a channel
// closed once the master is down.
func (e *env) killMasterAfter(d time.Duration) <-chan struct{} {
	down := make(chan struct{})
	s := e.c.Servers[len(e.c.Servers)-1]
	go func() {
		defer close(down)
		time.Sleep(d)
		s.Kill()
	}()
	return down
}

// The checker over child logs catches what it must: it is the evidence of every
// black-box test, so it is tested on logs with known answers.
func TestChildLogChecker(t *testing.T) {
	tests := []struct {
		name    string
		log     string
		max     int
		overlap int // pairs among all spans
		err     string
	}{
		{"one after another", "start a 10 pid=1\nend a 20 done\nstart b 20\nend b 30 done\n", 1, 0, ""},
		{"overlap by a nanosecond", "start a 10\nstart b 19\nend a 20 done\nend b 30 done\n", 2, 1, ""},
		{"three at once", "start a 1\nstart b 2\nstart c 3\nend c 4\nend b 5\nend a 6\n", 3, 3, ""},
		{"a killed child stays open", "start a 1\nstart b 100\nend b 200 done\n", 2, 1, ""},
		{"interleaved pairs never three", "start a 1\nstart b 2\nend a 3\nstart c 3\nend b 4\nend c 5\n", 2, 2, ""},
		{"end without start", "end a 1 done\n", 0, 0, "without a start"},
		{"started twice", "start a 1\nstart a 2\n", 0, 0, "started twice"},
		{"garbage", "start a x\n", 0, 0, "invalid syntax"},
		{"ended before it started", "start a 5\nend a 4\n", 0, 0, "before it started"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spans, err := parseSpans(tt.log)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			n, _ := maxConcurrent(spans)
			require.Equal(t, tt.max, n)
			require.Len(t, crossOverlaps(spans, spans), 2*tt.overlap, "each pair is seen from both sides")
		})
	}
}
