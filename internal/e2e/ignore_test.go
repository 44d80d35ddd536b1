package e2e

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withFencingWarning is e's file whose fencing policy lacks appendfsync always,
// with the given ignore blocks.
func (e *env) withFencingWarning(ignores string) string {
	return e.variant("fencing.hcl", `appendfsync = "always"`, `appendonly = "yes"`, "  lock \"capped/*\"", ignores+"  lock \"capped/*\"")
}

// Regression (issue 23 item 6): with a fencing policy, acquire, extend, release,
// nodes and locks each printed the fencing warning, and ignore "fencing-fsync"
// silenced it only in plan. An ignore block silences its finding in every command;
// a file's warnings print at most once per command, on stderr.
func TestIgnoreSilencesAFindingEverywhere(t *testing.T) {
	e := newEnv(t)
	commands := func(cfg string) map[string]result {
		out := map[string]result{}
		r := e.run("acquire", "fenced/x", "-config", cfg, "-ttl", "5s")
		require.Equal(t, 0, r.code, r.stderr)
		out["acquire"] = r
		tok := strings.TrimSpace(r.stdout)
		for name, args := range map[string][]string{
			"extend": {"extend", "fenced/x", "-token", tok},
			"locks":  {"locks"},
			"nodes":  {"nodes"},
			"plan":   {"plan"},
		} {
			out[name] = e.run(append(args, "-config", cfg)...)
		}
		out["run"] = e.run("run", "fenced/r", "-config", cfg, "--", "true")
		out["release"] = e.run("release", "fenced/x", "-config", cfg, "-token", tok)
		return out
	}

	// Not acknowledged: on stderr, at most once per command; by the lock commands
	// once per content of the file (acquire runs first), by plan every time.
	for name, r := range commands(e.withFencingWarning("")) {
		want := 0
		if name == "acquire" || name == "plan" {
			want = 1
		}
		assert.Equal(t, want, strings.Count(r.stderr, "Fencing without appendfsync always"), "%s: stderr %s", name, r.stderr)
		assert.NotContains(t, r.stdout, "Fencing without appendfsync always", name)
	}

	// Acknowledged: silent everywhere but plan, which marks it "ack".
	cfg := e.withFencingWarning(`  ignore "fencing-fsync" { reason = "fence numbers are advisory here" }
`)
	for name, r := range commands(cfg) {
		assert.NotContains(t, r.stderr, "Fencing without appendfsync always", name)
		assert.NotContains(t, r.stderr, "Warning", "%s: %s", name, r.stderr)
		switch name {
		case "plan":
			assert.Regexp(t, `(?m)^  ack     fencing-fsync: .*\[5 masters: a, b, c, d, e\]$`, r.stdout)
		case "nodes":
			assert.NotContains(t, r.stdout, "fencing-fsync", "nodes: %s", r.stdout)
			assert.Contains(t, r.stdout, "acknowledged in the file: not shown")
			// Identical findings are grouped across masters, as plan does.
			assert.Regexp(t, `(?m)^  warning vulnerable-version: .*\[5 masters: a, b, c, d, e\]$`, r.stdout)
		default:
			assert.NotContains(t, r.stdout, "fencing", "%s: %s", name, r.stdout)
		}
	}
	r := e.run("validate", "-config", cfg)
	assert.Equal(t, 0, r.code, r.stderr)
	assert.NotContains(t, r.stdout+r.stderr, "Fencing without appendfsync always")
}
