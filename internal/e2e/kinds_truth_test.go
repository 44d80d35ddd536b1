package e2e

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every surface tells the truth about every kind of hold: what `locks`,
// `locks -json` and `watch` show is compared with what the masters hold.

// watchLine runs `watch` until it printed one human line and returns it.
func (e *env) watchLine(t *testing.T) string {
	t.Helper()
	w := e.start("watch", "-interval", "100ms")
	require.Eventually(t, func() bool { return strings.Contains(w.stdout.String(), "\n") }, 15*time.Second, 20*time.Millisecond)
	require.NoError(t, w.cmd.Process.Signal(syscall.SIGINT))
	w.wait(t, 10*time.Second)
	line, _, _ := strings.Cut(w.stdout.String(), "\n")
	return line
}

// A finished election leaves its term record (a hash without TTL) on every
// master: it is the election's bookkeeping, not an orphaned lock of another
// library. `locks -json` listed it as an orphaned "redisson" lock and `watch`
// counted one orphaned lock per finished election.
func TestBugElectionRecordIsNoOrphanedLock(t *testing.T) {
	e := newEnv(t)
	for _, name := range []string{"e1", "e2", "e3"} {
		r := e.run("elect", name, "-ttl", "5s", "--", "true")
		require.Equal(t, 0, r.code, r.stderr)
	}
	for _, s := range e.c.Servers {
		n, err := s.Client().Exists(context.Background(), "lock:e1:leader:term", "lock:e2:leader:term", "lock:e3:leader:term").Result()
		require.NoError(t, err)
		require.EqualValues(t, 3, n, "%s keeps the three records", s.Name)
	}

	r := e.run("locks", "-json")
	require.Equal(t, 0, r.code, r.stderr)
	doc := checkDoc(t, "locks", r.stdout)
	for _, l := range doc["locks"].([]any) {
		lm := l.(map[string]any)
		assert.NotEqual(t, "orphaned", lm["state"], "%v", lm)
		assert.NotEqual(t, "redisson", lm["library"], "%v", lm)
	}
	assert.NotContains(t, r.stdout, "leader:term", "a record is no lock")

	txt := e.run("locks")
	require.Equal(t, 0, txt.code, txt.stderr)
	assert.NotContains(t, txt.stdout, "orphaned")

	assert.Contains(t, e.watchLine(t), " 0 orphaned")
}

// A shared hold that only some masters hold (2 of 5: below a quorum, its
// members expire by themselves) is partial, and this tool's own, on every
// surface: the console said "orphaned ... shared 0", `locks` "free" with a
// holder "partial 2/5", `locks -json` "orphaned" of library "unknown".
func TestBugPartialSharedHoldIsPartialEverywhere(t *testing.T) {
	e := newEnv(t)
	r := e.run("acquire", "doc", "-shared", "-ttl", "9s", "-owner", "reader")
	require.Equal(t, 0, r.code, r.stderr)
	for _, s := range e.c.Servers[2:] {
		require.NoError(t, s.Client().Del(context.Background(), "lock:doc").Err())
	}
	held := 0
	for _, s := range e.c.Servers {
		n, err := s.Client().ZCard(context.Background(), "lock:doc").Result()
		require.NoError(t, err)
		held += int(n)
	}
	require.Equal(t, 2, held, "the holder is on 2 of 5 masters")

	js := e.run("locks", "-json")
	require.Equal(t, 0, js.code, js.stderr)
	doc := checkDoc(t, "locks", js.stdout)
	locks := doc["locks"].([]any)
	require.Len(t, locks, 1)
	lk := locks[0].(map[string]any)
	assert.Equal(t, "partial", lk["state"])
	assert.Equal(t, "redlock", lk["library"])
	prims := doc["primitives"].([]any)
	require.Len(t, prims, 1)
	p := prims[0].(map[string]any)
	assert.Equal(t, "shared", p["kind"])
	assert.Equal(t, "partial", p["state"])

	txt := e.run("locks")
	require.Equal(t, 0, txt.code, txt.stderr)
	row := lineWith(t, txt.stdout, "doc")
	assert.Contains(t, row, "partial")
	assert.NotContains(t, row, "free")

	assert.Contains(t, e.watchLine(t), "0 held, 1 partial, 0 contested, 0 orphaned")
}

// lineWith is the first line of out that starts with prefix.
func lineWith(t *testing.T, out, prefix string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	t.Fatalf("no line starts with %q in:\n%s", prefix, out)
	return ""
}

// Two shared holders taken and released on all five masters are two
// acquisitions and two releases of shared holders, each on the 5 masters that
// held it: poll mode said "acquired ... (0 of 5 masters)", and the shared key
// itself came out as a lock of its own.
func TestBugSharedHoldersInEvents(t *testing.T) {
	for _, mode := range []string{"poll", "keyspace"} {
		t.Run(mode, func(t *testing.T) {
			e := newEnv(t)
			if mode == "keyspace" {
				e.keyspaceOn()
			}
			log := collectEventsIn(t, e, mode, "-interval", "100ms")
			a := e.acquireToken("doc", "-shared", "-ttl", "8s", "-owner", "ra")
			b := e.acquireToken("doc", "-shared", "-ttl", "8s", "-owner", "rb")
			require.Eventually(t, func() bool { return log.count("acquired", "doc") >= 2 }, 10*time.Second, 20*time.Millisecond, "%v", log.all())
			for _, tok := range []string{a, b} {
				r := e.run("release", "doc", "-token", tok)
				require.Equal(t, 0, r.code, r.stderr)
			}
			require.Eventually(t, func() bool { return log.count("released", "doc") >= 2 }, 10*time.Second, 20*time.Millisecond, "%v", log.all())
			time.Sleep(300 * time.Millisecond) // nothing else comes
			var got []string
			for _, d := range log.all() {
				if d["name"] != "doc" {
					continue
				}
				got = append(got, d["event"].(string))
				assert.Equal(t, "shared", d["kind"], "%v", d)
				assert.Len(t, d["masters"], 5, "%v", d)
			}
			assert.ElementsMatch(t, []string{"acquired", "acquired", "released", "released"}, got)
		})
	}
}

// An exclusive acquisition refused by shared holders, and a shared one refused
// because an exclusive holder waits, say so: both said "held by unknown".
func TestBugHeldBySharedHoldersSaysSo(t *testing.T) {
	e := newEnv(t)
	for _, owner := range []string{"ra", "rb"} {
		e.acquireToken("doc", "-shared", "-ttl", "9s", "-owner", owner)
	}
	r := e.run("acquire", "doc", "-ttl", "3s", "-wait", "0")
	require.Equal(t, 3, r.code, r.stderr)
	assert.Contains(t, r.stderr, "doc is held by 2 shared holders (r")
	assert.NotContains(t, r.stderr, "unknown")

	waiter := e.start("acquire", "doc", "-ttl", "3s", "-wait", "8s")
	require.Eventually(t, func() bool { return len(e.keys("lock:doc:xwait")) >= 3 }, 10*time.Second, 20*time.Millisecond)
	r = e.run("acquire", "doc", "-shared", "-ttl", "3s", "-wait", "0")
	require.Equal(t, 3, r.code, r.stderr)
	assert.Contains(t, r.stderr, "doc is held by 2 shared holders (r")
	assert.Contains(t, r.stderr, "an exclusive holder waits")
	assert.NotContains(t, r.stderr, "unknown")
	require.NoError(t, waiter.cmd.Process.Signal(syscall.SIGINT))
	waiter.wait(t, 10*time.Second)
}

// A semaphore's permit count is stored with its holders and one name is one
// kind of hold: `acquire sem -permits 4` on a semaphore held with 3 succeeded
// (locks then read 3/4), and a plain `acquire sem` succeeded while every permit
// was held, listing sem in two tables. Both are refused, saying why, and the
// masters hold nothing more than before.
func TestBugSemaphoreLimitAndKindAreKept(t *testing.T) {
	e := newEnv(t)
	for range 3 {
		e.acquireToken("sem", "-permits", "3", "-ttl", "9s")
	}
	e.acquireToken("plain", "-ttl", "9s")
	tests := []struct {
		args []string
		code int
		says string
	}{
		{[]string{"acquire", "sem", "-permits", "4"}, 2, "semaphore sem is held with 3 permits (3 held)"},
		{[]string{"acquire", "sem", "-permits", "2"}, 2, "acquire it with -permits 3"},
		{[]string{"acquire", "sem"}, 3, "sem is a semaphore (3 of 3 permits held)"},
		{[]string{"acquire", "sem", "-shared"}, 3, "sem is a semaphore"},
		{[]string{"run", "sem", "--", "true"}, 3, "sem is a semaphore"},
		{[]string{"acquire", "plain", "-permits", "2"}, 3, "plain is held as a plain lock, not as a semaphore"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := e.run(tt.args...)
			assert.Equal(t, tt.code, r.code, r.stderr)
			assert.Contains(t, r.stderr, tt.says)
			assert.Empty(t, r.stdout, "no token")
		})
	}
	assert.Empty(t, e.keys("lock:sem"), "no plain lock beside the semaphore")
	assert.Empty(t, e.keys("lock:sem:permit:3"), "no fourth permit")
	assert.Empty(t, e.keys("lock:plain:permit:0"))
	r := e.run("locks", "-json")
	require.Equal(t, 0, r.code, r.stderr)
	doc := checkDoc(t, "locks", r.stdout)
	for _, p := range doc["primitives"].([]any) {
		if pm := p.(map[string]any); pm["name"] == "sem" {
			assert.Equal(t, "3", fmt.Sprint(pm["permits"]))
			assert.Equal(t, "3", fmt.Sprint(pm["held"]))
		}
	}
}

// A release or extension with the token of another lock is refused, naming the
// mistake, and touches nothing: it said "missing (already gone)" with exit 0,
// and the real lock stayed until its TTL. Tokens without the name's tag (an
// earlier version's) still release their lock.
func TestBugTokenOfAnotherLockIsRefused(t *testing.T) {
	e := newEnv(t)
	tokA := e.acquireToken("tokA", "-ttl", "9s")
	multi := e.acquireToken("m-2", "m-1", "-ttl", "9s")
	tests := []struct {
		args []string
		tok  string
		says string
	}{
		{[]string{"release", "tokB"}, tokA, "not the token of lock tokB"},
		{[]string{"extend", "tokB"}, tokA, "not the token of lock tokB"},
		{[]string{"release", "m-1", "x-9"}, multi, "not the token of names m-1, x-9"},
		{[]string{"release", "tokA"}, multi, "the token holds 2 names"},
	}
	for _, tt := range tests {
		r := e.run(append(tt.args, "-token", tt.tok)...)
		assert.Equal(t, 2, r.code, "%v: %s", tt.args, r.stderr)
		assert.Contains(t, r.stderr, tt.says)
	}
	assert.Len(t, e.keys("lock:tokA"), 5, "tokA is still held everywhere")
	assert.Len(t, e.keys("lock:m-1"), 5)

	r := e.run("release", "m-1", "m-2", "-token", multi)
	assert.Equal(t, 0, r.code, r.stderr)
	r = e.run("release", "tokA", "-token", tokA)
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Empty(t, e.keys("lock:tokA"))

	// A token of an earlier version: no tag of its name.
	old := "rl1.AAAAAAAAAAAAAAAAAAAAAAAAAAA.eyJoIjoib2xkIn0"
	for _, s := range e.c.Servers {
		require.NoError(t, s.Client().Set(context.Background(), "lock:legacy", old, 9*time.Second).Err())
	}
	r = e.run("release", "legacy", "-token", old)
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Empty(t, e.keys("lock:legacy"), "an old token still releases its lock")
}

// One duration format everywhere (internal/human): `nodes` printed Go's
// durations ("300µs", "38m27s", "+215µs±254µs") where the console prints
// "0.3ms" and "38m27s"; acquire printed "(59.392s)" and its errors "after 1s".
func TestBugOneDurationFormat(t *testing.T) {
	e := newEnv(t)
	r := e.run("nodes")
	require.Equal(t, 0, r.code, r.stderr)
	assert.NotContains(t, r.stdout, "µs")
	row := strings.Fields(lineWith(t, r.stdout, e.c.Servers[0].Name+" "))
	assert.Regexp(t, `^(\d\.\dms|\d+ms)$`, row[3], "latency: %v", row)
	assert.Regexp(t, `^(\d+ms|\d+\.\ds|\d+m\d\ds)$`, row[6], "uptime: %v", row)

	r = e.run("acquire", "held", "-ttl", "9s", "-owner", "a")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `valid until \S+ \(\d\.\ds\)`, r.stderr)
	r = e.run("acquire", "held", "-wait", "300ms")
	require.Equal(t, 3, r.code, r.stderr)
	assert.Contains(t, r.stderr, "wait expired after 300ms")
	assert.Regexp(t, `held by a, \S+ pid \d+, since \S+ for \d\.\ds more`, r.stderr)
}
