package e2e

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBugReportsGoToStderrAndNameTheKeys: release and force-expire printed their
// per-master report on stdout and extend on stderr; human text goes to stderr,
// data (a token, a -json document) to stdout. The report names the key it acted
// on: a permit's slot (not the semaphore's name, which may be a plain lock of
// its own), every key of a multi-name hold.
func TestBugReportsGoToStderrAndNameTheKeys(t *testing.T) {
	e := newEnv(t)
	plain := e.acquireToken("k-plain", "-ttl", "9s")
	e.acquireToken("k-sem", "-permits", "2", "-ttl", "9s")
	permit := e.acquireToken("k-sem", "-permits", "2", "-ttl", "9s") // slot 1
	multi := e.acquireToken("k-a", "k-b", "-ttl", "9s")
	e.acquireToken("k-fx", "-ttl", "9s")
	e.acquireToken("k-sem2", "-permits", "2", "-ttl", "9s")
	tests := []struct {
		name   string
		args   []string
		stderr []string // lines the report has
		gone   []string // keys deleted
		kept   []string // keys left on every master
	}{
		{"extend plain", []string{"extend", "k-plain", "-token", plain}, []string{"extended lock:k-plain (5 of 5 masters)"}, nil, []string{"lock:k-plain"}},
		{"extend permit", []string{"extend", "k-sem", "-token", permit}, []string{"extended lock:k-sem:permit:1 (5 of 5 masters)"}, nil, []string{"lock:k-sem:permit:1"}},
		{"extend multi", []string{"extend", "k-b", "k-a", "-token", multi}, []string{"extended lock:k-b and lock:k-a (5 of 5 masters)"}, nil, []string{"lock:k-a", "lock:k-b"}},
		{"release permit", []string{"release", "k-sem", "-token", permit}, []string{"lock:k-sem:permit:1: deleted on 5 of 5 masters", "released"},
			[]string{"lock:k-sem:permit:1"}, []string{"lock:k-sem:permit:0"}},
		{"release multi", []string{"release", "k-a", "k-b", "-token", multi}, []string{"lock:k-a and lock:k-b: deleted on 5 of 5 masters"}, []string{"lock:k-a", "lock:k-b"}, nil},
		{"release plain", []string{"release", "k-plain", "-token", plain}, []string{"lock:k-plain: deleted on 5 of 5 masters"}, []string{"lock:k-plain"}, nil},
		{"force-expire -now plain", []string{"force-expire", "k-fx", "-yes", "-now"}, []string{"lock:k-fx: deleted on 5 of 5 masters"}, []string{"lock:k-fx"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.run(tt.args...)
			require.Equal(t, 0, r.code, r.stderr)
			assert.Empty(t, r.stdout, "nothing for a script on stdout without -json")
			for _, want := range tt.stderr {
				assert.Contains(t, r.stderr, want)
			}
			for _, k := range tt.gone {
				assert.Empty(t, e.keys(k), "%s deleted", k)
			}
			for _, k := range tt.kept {
				assert.Len(t, e.keys(k), 5, "%s kept", k)
			}
		})
	}

	// A semaphore's force-expire (a revocation): every part's report on stderr.
	r := e.run("force-expire", "k-sem2", "-yes")
	require.Equal(t, 6, r.code, r.stderr)
	assert.Empty(t, r.stdout)
	assert.Contains(t, r.stderr, "lock:k-sem2:permit:0: revoked on 5 of 5 masters")

	// A conflict on a semaphore names the slots it tried.
	e.acquireToken("k-full", "-permits", "2", "-ttl", "9s")
	e.acquireToken("k-full", "-permits", "2", "-ttl", "9s")
	r = e.run("acquire", "k-full", "-permits", "2", "-wait", "0")
	assert.Equal(t, 3, r.code)
	assert.Contains(t, r.stderr, "acquire lock:k-full:permit:{0..1}: held by another owner")
	assert.NotContains(t, r.stderr, "permit: held")

	// -json documents still go to stdout, and name the slot and the names.
	tok := e.acquireToken("k-full2", "-permits", "2", "-ttl", "9s")
	r = e.run("release", "k-full2", "-token", tok, "-json")
	require.Equal(t, 0, r.code, r.stderr)
	doc := checkDoc(t, "release", r.stdout)
	assert.Equal(t, "lock:k-full2:permit:0", doc["key"])
	assert.False(t, strings.Contains(r.stderr, "deleted on"), "the report is the document: %s", r.stderr)
	tok = e.acquireToken("k-c", "k-d", "-ttl", "9s")
	r = e.run("release", "k-c", "k-d", "-token", tok, "-json")
	require.Equal(t, 0, r.code, r.stderr)
	doc = checkDoc(t, "release", r.stdout)
	assert.Equal(t, []any{"k-c", "k-d"}, doc["names"])
}
