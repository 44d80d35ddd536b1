package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// acquire, extend and release of every primitive by hand, as a script does:
// exit codes, JSON documents against their schemas, keys on the masters.
func TestAcquireExtendReleasePrimitives(t *testing.T) {
	e := newEnv(t)

	// Several names: all or none, one token; extend and release cover them all.
	r := e.run("acquire", "m-a", "m-b", "m-c", "-ttl", "5s", "-json")
	require.Equal(t, 0, r.code, r.stderr)
	doc := checkDoc(t, "acquire", r.stdout)
	assert.Equal(t, []any{"m-a", "m-b", "m-c"}, doc["names"])
	multi := doc["token"].(string)
	for _, k := range []string{"lock:m-a", "lock:m-b", "lock:m-c"} {
		assert.Len(t, e.keys(k), 5, k)
	}
	r = e.run("acquire", "m-c", "m-d", "-wait", "0")
	assert.Equal(t, 3, r.code, "m-c is taken: none of m-c, m-d is taken")
	assert.Empty(t, e.keys("lock:m-d"), "a failed round leaves nothing behind")
	r = e.run("extend", "m-c", "m-a", "m-b", "-token", multi, "-json")
	assert.Equal(t, 0, r.code, r.stderr)
	checkDoc(t, "extend", r.stdout)
	r = e.run("extend", "m-a", "-token", multi)
	assert.Equal(t, 2, r.code, "a multi-name token needs every name")
	assert.Contains(t, r.stderr, "3 names")
	r = e.run("release", "m-a", "m-b", "m-c", "-token", multi)
	assert.Equal(t, 0, r.code, r.stderr)
	for _, k := range []string{"lock:m-a", "lock:m-b", "lock:m-c"} {
		assert.Empty(t, e.keys(k), k)
	}

	// -permits 2: two holders, the third is refused; a release frees one permit.
	var tokens []string
	for i := range 2 {
		r := e.run("acquire", "sem", "-permits", "2", "-ttl", "5s", "-json")
		require.Equal(t, 0, r.code, r.stderr)
		doc := checkDoc(t, "acquire", r.stdout)
		assert.Equal(t, "2", fmt.Sprint(doc["permits"]))
		assert.Equal(t, fmt.Sprint(i), fmt.Sprint(doc["permit"]), "permits are taken in slot order")
		tokens = append(tokens, doc["token"].(string))
	}
	r = e.run("acquire", "sem", "-permits", "2", "-json", "-wait", "0")
	assert.Equal(t, 3, r.code, "every permit is taken")
	checkDoc(t, "acquire", r.stdout)
	r = e.run("extend", "sem", "-token", tokens[1])
	assert.Equal(t, 0, r.code, r.stderr)
	r = e.run("release", "sem", "-token", tokens[0])
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Empty(t, e.keys("lock:sem:permit:0"), "the first permit is free")
	assert.Len(t, e.keys("lock:sem:permit:1"), 5, "the other holder keeps its permit")
	r = e.run("acquire", "sem", "-permits", "2")
	assert.Equal(t, 0, r.code, r.stderr)

	// -shared: shared holders together, a plain lock excluded, and the reverse.
	r1 := e.run("acquire", "doc", "-shared", "-ttl", "5s", "-json")
	require.Equal(t, 0, r1.code, r1.stderr)
	assert.Equal(t, true, checkDoc(t, "acquire", r1.stdout)["shared"])
	r2 := e.run("acquire", "doc", "-shared", "-ttl", "5s")
	require.Equal(t, 0, r2.code, r2.stderr)
	r = e.run("acquire", "doc", "-wait", "0")
	assert.Equal(t, 3, r.code, "a plain lock waits for the shared holders")
	sh1 := checkDoc(t, "acquire", r1.stdout)["token"].(string)
	r = e.run("release", "doc", "-token", sh1)
	assert.Equal(t, 0, r.code, r.stderr)
	r = e.run("acquire", "doc", "-wait", "0")
	assert.Equal(t, 3, r.code, "one shared holder is left")
	r = e.run("release", "doc", "-token", strings.TrimSpace(r2.stdout))
	assert.Equal(t, 0, r.code, r.stderr)
	r = e.run("acquire", "doc", "-ttl", "5s")
	require.Equal(t, 0, r.code, r.stderr)
	r = e.run("acquire", "doc", "-shared", "-wait", "0")
	assert.Equal(t, 3, r.code, "a shared hold waits for the exclusive holder")
}

// permits = N in a lock policy makes every acquire and run of a matching name
// take a permit; -permits overrides it.
func TestPolicyPermits(t *testing.T) {
	e := newEnv(t)
	for i := range 2 {
		r := e.run("acquire", "pool/a", "-ttl", "5s", "-json")
		require.Equal(t, 0, r.code, r.stderr)
		doc := checkDoc(t, "acquire", r.stdout)
		assert.Equal(t, "2", fmt.Sprint(doc["permits"]))
		assert.Equal(t, fmt.Sprint(i), fmt.Sprint(doc["permit"]))
	}
	r := e.run("acquire", "pool/a", "-wait", "0")
	assert.Equal(t, 3, r.code, "both permits of the policy are taken: %s", r.stderr)
	r = e.run("run", "pool/b", "-permits", "3", "--", "sh", "-c", "echo $REDLOCK_PERMIT/$REDLOCK_PERMITS")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "0/3\n", r.stdout, "-permits overrides the policy")
	r = e.run("run", "pool/a", "-permits", "3", "--", "true")
	assert.Equal(t, 2, r.code, "but not the count its holders store: %s", r.stderr)
	assert.Contains(t, r.stderr, "held with 2 permits")
}

func TestPrimitiveUsageErrors(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"acquire", "a", "a"}, "given twice"},
		{[]string{"acquire", "a", "b", "-permits", "2"}, "-permits takes one NAME"},
		{[]string{"acquire", "a", "-permits", "0"}, "-permits must be in 1..1024"},
		{[]string{"acquire", "a", "-permits", "2", "-shared"}, "do not go together"},
		{[]string{"run", "a", "b", "-shared", "--", "true"}, "-shared takes one NAME"},
		{[]string{"acquire", "fenced/x", "-shared"}, "fencing"},
		{[]string{"acquire", "fenced/x", "y"}, "fencing"},
		{[]string{"elect", "a", "b", "--", "true"}, "one lock NAME expected"},
		{[]string{"elect", "a"}, "missing CMD"},
		{[]string{"leader"}, "missing lock NAME"},
		{[]string{"acquire", "x:leader"}, "x:leader"},
		{[]string{"acquire", "pool/a", "-shared"}, "semaphore of 2 permits"},
		{[]string{"acquire", "pool/a", "b"}, "semaphore of 2 permits"},
	}
	for _, tt := range tests {
		r := e.run(tt.args...)
		assert.Equal(t, 2, r.code, "%v: %s", tt.args, r.stderr)
		assert.Contains(t, r.stderr, tt.want, "%v", tt.args)
	}
}
