package e2e

import (
	"bufio"
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// locks, watch and leader show each primitive for what it is, and what they
// show is what the masters hold: a multi-name hold's names under one token, a
// semaphore's holders k/N, shared holders with their count, the leader with its
// value and term. Hostile owner labels and leader values are escaped.
func TestLocksShowEachPrimitiveAsTheMastersHoldIt(t *testing.T) {
	e := newEnv(t)
	hostile := "mal\x1b[2Jory"
	must := func(args ...string) string {
		t.Helper()
		r := e.run(args...)
		require.Equal(t, 0, r.code, "%v: %s", args, r.stderr)
		return strings.TrimSpace(r.stdout)
	}
	must("acquire", "plain", "-ttl", "8s", "-owner", "alice")
	multi := must("acquire", "b-1", "a-1", "c-1", "-ttl", "8s", "-owner", "bob")
	must("acquire", "sem", "-permits", "3", "-ttl", "8s", "-owner", "carol")
	must("acquire", "sem", "-permits", "3", "-ttl", "8s", "-owner", "dave")
	must("acquire", "doc", "-shared", "-ttl", "8s", "-owner", "eve")
	must("acquire", "doc", "-shared", "-ttl", "8s", "-owner", hostile)
	elect := e.start("elect", "crond", "-value", "10.0.0.9:80\x1b[31m", "-ttl", "8s", "--", "sleep", "30")
	e.waitKey("lock:crond:leader")
	ld := e.run("leader", "crond", "-json")
	require.Equal(t, 0, ld.code, ld.stderr)
	leader := checkDoc(t, "leader", ld.stdout)

	r := e.run("locks", "-json")
	require.Equal(t, 0, r.code, r.stderr)
	doc := checkDoc(t, "locks", r.stdout)
	got := map[string]map[string]any{}
	for _, p := range doc["primitives"].([]any) {
		pm := p.(map[string]any)
		got[pm["kind"].(string)+":"+pm["name"].(string)] = pm
	}
	require.Len(t, got, 4, "every primitive but the plain lock, which \"locks\" lists: %v", keysOf(got))
	str := func(v any) string { return fmt.Sprint(v) }
	assert.Contains(t, r.stdout, `"name": "plain"`)
	mp := got["multi:a-1 b-1 c-1"]
	require.NotNil(t, mp)
	assert.Equal(t, []any{"a-1", "b-1", "c-1"}, mp["names"])
	for _, k := range []string{"lock:a-1", "lock:b-1", "lock:c-1"} {
		for _, v := range e.keys(k) {
			assert.Equal(t, multi, v, "every name holds the one token on every master")
		}
	}
	assert.NotContains(t, r.stdout, multi, "full tokens never show")

	sem := got["semaphore:sem"]
	assert.Equal(t, "3", str(sem["permits"]))
	assert.Equal(t, "2", str(sem["held"]))
	assert.Len(t, e.keys("lock:sem:permit:0"), 5)
	assert.Len(t, e.keys("lock:sem:permit:1"), 5)
	assert.Empty(t, e.keys("lock:sem:permit:2"))

	sh := got["shared:doc"]
	assert.Equal(t, "2", str(sh["held"]))
	for _, s := range e.c.Servers {
		n, err := s.Client().ZCard(context.Background(), "lock:doc").Result()
		require.NoError(t, err)
		assert.EqualValues(t, 2, n, "%s holds two shared holders", s.Name)
	}

	lp := got["leader:crond"]
	l := lp["leader"].(map[string]any)
	assert.Equal(t, leader["value"], l["value"])
	assert.Equal(t, str(leader["term"]), str(l["term"]))

	human := e.run("locks")
	require.Equal(t, 0, human.code, human.stderr)
	t.Logf("locks:\n%s", human.stdout)
	assert.NotContains(t, human.stdout, "\x1b", "hostile strings are escaped")
	for _, want := range []string{"multi (3 names)", "semaphore 2/3", "shared x2", "leader term " + str(leader["term"]), `mal\x1b[2Jory`, `10.0.0.9:80\x1b[31m`} {
		assert.Contains(t, human.stdout, want)
	}
	lh := e.run("leader", "crond")
	assert.Equal(t, 0, lh.code)
	assert.NotContains(t, lh.stdout, "\x1b")
	assert.Regexp(t, `term +`+str(leader["term"])+`\n`, lh.stdout)

	// watch: the same primitives in each line.
	cmd := e.command("", "watch", "-interval", "200ms", "-json")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	require.True(t, sc.Scan())
	snap := checkDoc(t, "watch", sc.Text())
	assert.Len(t, snap["primitives"], 4)
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	assert.NoError(t, cmd.Wait())

	require.NoError(t, elect.cmd.Process.Signal(syscall.SIGTERM))
	elect.wait(t, 10*time.Second)
	r = e.run("leader", "crond", "-json")
	assert.Equal(t, 3, r.code, "nobody leads after the leader resigned: %s", r.stdout)
	checkDoc(t, "leader", r.stdout)
}

// force-expire of a primitive deletes what it showed of it: every permit, every
// shared holder, every name of a multi-name hold, the leadership (the leader's
// command is stopped and the next candidate elected); with -token only that
// holder's part.
func TestForceExpirePrimitives(t *testing.T) {
	e := newEnv(t)
	acq := func(args ...string) string {
		t.Helper()
		r := e.run(append([]string{"acquire"}, args...)...)
		require.Equal(t, 0, r.code, "%v: %s", args, r.stderr)
		return strings.TrimSpace(r.stdout)
	}
	fxCode := func(code int, args ...string) map[string]any {
		t.Helper()
		r := e.run(append([]string{"force-expire"}, append(args, "-yes", "-json")...)...)
		require.Equal(t, code, r.code, "%v: %s", args, r.stderr)
		return checkDoc(t, "force-expire", r.stdout)
	}
	fx := func(args ...string) map[string]any { t.Helper(); return fxCode(0, append(args, "-now")...) }
	acq("sem", "-permits", "3", "-ttl", "8s")
	second := acq("sem", "-permits", "3", "-ttl", "8s")
	doc := fx("sem", "-token", second)
	assert.Equal(t, "semaphore", doc["kind"])
	assert.Len(t, e.keys("lock:sem:permit:0"), 5, "-token: the other permit is kept")
	assert.Empty(t, e.keys("lock:sem:permit:1"))
	fx("sem")
	assert.Empty(t, e.keys("lock:sem:permit:0"))

	acq("doc", "-shared", "-ttl", "8s")
	acq("doc", "-shared", "-ttl", "8s")
	doc = fx("doc")
	assert.Equal(t, "shared", doc["kind"])
	assert.Len(t, doc["parts"], 2, "each holder removed")
	assert.Empty(t, e.keys("lock:doc"))
	r := e.run("acquire", "doc", "-ttl", "1s")
	assert.Equal(t, 0, r.code, "the name is free: %s", r.stderr)

	// A shared holder revoked: its tombstone keeps an exclusive acquirer out (the
	// holder, a script that kept the token, may still act), and locks shows it.
	acq("doc2", "-shared", "-ttl", "8s")
	doc = fxCode(6, "doc2")
	assert.Equal(t, "revoked", doc["action"])
	r = e.run("acquire", "doc2", "-wait", "0")
	assert.Equal(t, 3, r.code, "the revoked holder's validity runs: %s", r.stderr)
	r = e.run("locks")
	assert.Contains(t, r.stdout, "revoked, free at")
	fx("doc2")

	acq("x", "y", "z", "-ttl", "8s")
	doc = fx("y")
	assert.Equal(t, "multi", doc["kind"])
	for _, k := range []string{"lock:x", "lock:y", "lock:z"} {
		assert.Empty(t, e.keys(k), "every name of the hold: %s", k)
	}

	file := logFile(t)
	el := e.start(append([]string{"elect", "crond", "-ttl", "8s", "--"}, childArgv(t, "l0", file, 0)...)...)
	e.waitKey("lock:crond:leader")
	require.Eventually(t, func() bool { return len(readSpans(t, file)) == 1 }, 10*time.Second, 10*time.Millisecond)
	doc = fxCode(6, "crond") // revoked: the leader is told to stop
	assert.Equal(t, "leader", doc["kind"])
	assert.Equal(t, "revoked", doc["action"])
	assert.Equal(t, 4, el.wait(t, 10*time.Second), "the deposed leader's elect reports the loss: %s", el.stderr)
	spans := readSpans(t, file)
	assert.Equal(t, "term", spans[0].Why, "the leader's command got SIGTERM")
}
