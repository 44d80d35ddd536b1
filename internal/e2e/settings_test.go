package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withSettings writes a topology file for e's masters with the given settings block
// body and returns its path.
func (e *env) withSettings(settings string) string {
	e.t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "cluster \"e2e\" {\n  key_prefix = \"lock:\"\n  ttl = \"3s\"\n  max_ttl = \"10s\"\n  node_timeout = \"250ms\"\n  restart_quarantine = false\n  settings {\n%s\n  }\n", settings)
	for _, s := range e.c.Servers {
		fmt.Fprintf(&b, "  master %q { address = %q }\n", s.Name, s.Addr())
	}
	b.WriteString("}\n")
	path := filepath.Join(e.t.TempDir(), "settings.hcl")
	require.NoError(e.t, os.WriteFile(path, []byte(b.String()), 0o600))
	return path
}

// configOf returns a setting's value on every master.
func (e *env) configOf(name string) []string {
	var out []string
	for _, s := range e.c.Servers {
		v, err := s.Client().ConfigGet(context.Background(), name).Result()
		require.NoError(e.t, err)
		out = append(out, v[name])
	}
	return out
}

// Regression (issue 23 item 3): after apply of notify_keyspace_events = "Kg$x" Redis
// reads it back as "g$xK", and every later plan showed drift: -detailed-exitcode
// exited 2 forever. A plan right after a successful apply is empty.
func TestPlanSettlesAfterApply(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct{ name, settings string }{
		{"keyspace flags reordered", `notify_keyspace_events = "Kg$x"`},
		{"the A alias", `notify_keyspace_events = "KEA"`},
		{"sizes", `maxmemory = "100mb"
    auto_aof_rewrite_min_size = "64mb"`},
		{"yes/no and case", `appendonly = true
    appendfsync = "Always"
    maxmemory_policy = "NoEviction"
    loglevel = "WARNING"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := e.withSettings(tc.settings)
			r := e.run("apply", "-auto-approve", "-config", cfg)
			require.Equal(t, 0, r.code, "%s%s", r.stdout, r.stderr)
			assert.Contains(t, r.stdout, "Apply complete")
			r = e.run("plan", "-detailed-exitcode", "-config", cfg)
			assert.Equal(t, 0, r.code, "a plan right after apply is empty: %s%s", r.stdout, r.stderr)
			assert.Contains(t, r.stdout, "Plan: 0 settings to change on 0 masters")
		})
	}
}

// Regression: plan counted a declared enable_debug_command (and rdbchecksum) that
// differed from the master's as a change apply would make, though Redis reads them
// only at startup and CONFIG SET refuses them: apply failed on it every time and
// plan never settled. Now plan shows the difference as the startup-setting warning,
// no change; apply does not try it and succeeds; -detailed-exitcode exits 0.
func TestPlanStartupSettingIsNotAChange(t *testing.T) {
	e := newEnv(t) // the test masters run with enable-debug-command local
	cfg := e.withSettings(`    appendfsync = "always"
    enable_debug_command = "no"
    rdbchecksum = false`)
	r := e.run("apply", "-auto-approve", "-config", cfg)
	assert.Equal(t, 0, r.code, "apply does not try a startup setting: %s%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "Apply complete")
	assert.Equal(t, []string{"local", "local", "local", "local", "local"}, e.configOf("enable-debug-command"))

	r = e.run("plan", "-detailed-exitcode", "-config", cfg)
	assert.Equal(t, 0, r.code, "a plan right after apply is empty: %s%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "Plan: 0 settings to change on 0 masters")
	assert.NotContains(t, r.stdout, "~ enable-debug-command")
	assert.Contains(t, r.stdout, `warning startup-setting: enable-debug-command is "local", declared "no"`)
	assert.Contains(t, r.stdout, `warning startup-setting: rdbchecksum is "yes", declared "no"`)

	r = e.run("plan", "-json", "-config", cfg)
	require.Equal(t, 0, r.code, "%s%s", r.stdout, r.stderr)
	var doc struct {
		Masters []struct {
			Health struct {
				Findings []struct{ Code, Summary string }
			}
			Changes []any
		}
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc))
	require.Len(t, doc.Masters, 5)
	for _, m := range doc.Masters {
		assert.Empty(t, m.Changes)
		var startup []string
		for _, f := range m.Health.Findings {
			if f.Code == "startup-setting" {
				startup = append(startup, f.Summary)
			}
		}
		assert.Len(t, startup, 2, "one finding per differing startup setting")
	}
}

// Regression (issue 23 item 4): validate accepted misspelt and unknown settings and
// an eviction policy that can evict lock keys, which plan passed and apply set.
func TestSettingsAreChecked(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name, settings string
		want           []string
	}{
		{"misspelt", `maxmemory_polcy = "noeviction"`, []string{"Unknown setting", `Did you mean "maxmemory_policy"?`, "settings.hcl line 8"}},
		{"unknown", `frobnicate = "yes"`, []string{"Unknown setting", "settings.frobnicate is not a Redis setting", "settings.hcl line 8"}},
		{"bad bool", `appendonly = "maybe"`, []string{"Invalid setting value", "appendonly takes yes or no", "settings.hcl line 8"}},
		{"bad size", `maxmemory = "lots"`, []string{"Invalid setting value", "maxmemory takes a memory size", "settings.hcl line 8"}},
		{"bad flag", `notify_keyspace_events = "Kq"`, []string{"Invalid setting value", "notify_keyspace_events takes flag characters"}},
		{"allkeys", `maxmemory_policy = "allkeys-lru"`, []string{"Setting breaks lock safety", "can evict lock keys", "settings.hcl line 8"}},
		{"volatile", `maxmemory_policy = "volatile-ttl"`, []string{"Setting breaks lock safety"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := e.withSettings("    " + tc.settings)
			r := e.run("validate", "-config", cfg)
			assert.Equal(t, 2, r.code, "%s%s", r.stdout, r.stderr)
			for _, w := range tc.want {
				assert.Contains(t, r.stdout+r.stderr, w)
			}
			r = e.run("plan", "-config", cfg)
			assert.Equal(t, 1, r.code, "%s%s", r.stdout, r.stderr)
			assert.Contains(t, r.stdout+r.stderr, tc.want[0])
			r = e.run("apply", "-auto-approve", "-config", cfg)
			assert.Equal(t, 1, r.code, "%s%s", r.stdout, r.stderr)
			assert.NotContains(t, r.stdout, "Apply complete")
		})
	}
	assert.Equal(t, []string{"noeviction", "noeviction", "noeviction", "noeviction", "noeviction"}, e.configOf("maxmemory-policy"),
		"an unsafe policy is never applied")
}

// Regression (issue 23 item 4): apply with failures printed "Apply complete" after
// the failures. It prints an error summary naming each failure and exits 1.
func TestApplyFailuresAreAnError(t *testing.T) {
	e := newEnv(t)
	// a value that validate lets through (free text) and CONFIG SET refuses.
	cfg := e.withSettings(`    appendfsync = "always"
    client_output_buffer_limit = "bogus"`)
	r := e.run("apply", "-auto-approve", "-config", cfg)
	assert.Equal(t, 1, r.code, "%s%s", r.stdout, r.stderr)
	assert.NotContains(t, r.stdout, "Apply complete")
	assert.Contains(t, r.stdout, "Error: apply failed (5 settings changed; these failed):")
	for _, s := range e.c.Servers {
		assert.Regexp(t, fmt.Sprintf(`master %q: client-output-buffer-limit = "bogus": \S`, s.Name), r.stdout)
	}
	assert.Contains(t, r.stderr, "5 settings failed")
}
