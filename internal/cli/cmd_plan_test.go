package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// healthSafeArgs start a master that plan finds nothing to change on.
var healthSafeArgs = []string{"--maxmemory-policy", "noeviction", "--appendonly", "yes", "--appendfsync", "always", "--enable-debug-command", "no"}

func healthServer(t *testing.T, name string, extra ...string) *redistest.Server {
	t.Helper()
	return redistest.StartOne(t, name, redistest.Options{Args: append(append([]string{}, healthSafeArgs...), extra...)})
}

// healthMaster is one master block of a test topology.
type healthMaster struct {
	name, addr string
	password   bool // password = var.pw
}

// writeHealthTopology writes a topology with the masters and the settings every
// test here converges to, and returns its path.
func writeHealthTopology(t *testing.T, masters ...healthMaster) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(`variable "pw" {
  type      = string
  default   = ""
  sensitive = true
}

cluster "health" {
  ttl          = "30s"
  max_ttl      = "1m"
  node_timeout = "1s"
  # Brand-new test masters: no quarantine.
  restart_quarantine = false

  settings {
    maxmemory_policy = "noeviction"
    appendonly       = "yes"
    appendfsync      = "always"
  }
`)
	for _, m := range masters {
		fmt.Fprintf(&b, "  master %q {\n    address = %q\n", m.name, m.addr)
		if m.password {
			b.WriteString("    password = var.pw\n")
		}
		b.WriteString("  }\n")
	}
	b.WriteString("}\n")
	path := filepath.Join(t.TempDir(), "redlock.hcl")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))
	return path
}

type healthRun struct {
	code           int
	stdout, stderr string
}

func runHealthCmd(t *testing.T, stdin string, args ...string) healthRun {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	code := Main(context.Background(), env, args)
	return healthRun{code: code, stdout: out.String(), stderr: errb.String()}
}

func TestPlanApplyConverge(t *testing.T) {
	a := healthServer(t, "a", "--maxmemory-policy", "allkeys-lru", "--appendonly", "no")
	b := healthServer(t, "b", "--maxmemory-policy", "volatile-ttl")
	c := healthServer(t, "c")
	cfg := writeHealthTopology(t, healthMaster{name: "a", addr: a.Addr()}, healthMaster{name: "b", addr: b.Addr()}, healthMaster{name: "c", addr: c.Addr()})
	ctx := context.Background()

	r := runHealthCmd(t, "", "plan", "-config", cfg, "-detailed-exitcode")
	assert.Equal(t, ExitChanges, r.code, "eviction policies are errors that apply fixes: changes pending: %s%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, `~ maxmemory-policy: "allkeys-lru" -> "noeviction"`)
	assert.Contains(t, r.stdout, `~ appendonly: "no" -> "yes"`)
	assert.Contains(t, r.stdout, `~ maxmemory-policy: "volatile-ttl" -> "noeviction"`)
	assert.Contains(t, r.stdout, "error   eviction-policy: maxmemory-policy allkeys-lru can evict lock keys")
	assert.Contains(t, r.stdout, "warning weak-persistence: AOF off while restart quarantine is off")
	assert.Contains(t, r.stdout, `master "c" (`+c.Addr()+`): up, no changes`)
	assert.Regexp(t, regexp.MustCompile(`(?m)^Plan: 3 settings to change on 2 masters; 2 errors, \d+ warnings?\.$`), r.stdout)

	r = runHealthCmd(t, "", "plan", "--json", "-config", cfg)
	assert.Equal(t, ExitError, r.code)
	var doc struct {
		Summary struct{ Changes, Masters, Errors int }
		Masters []struct {
			Health struct {
				State string
			}
			Changes []struct{ Setting, From, To string }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), r.stdout)
	assert.Equal(t, 3, doc.Summary.Changes)
	assert.Equal(t, 2, doc.Summary.Masters)
	assert.Equal(t, 2, doc.Summary.Errors)
	require.Len(t, doc.Masters, 3)
	assert.Equal(t, "degraded", doc.Masters[0].Health.State)
	assert.Equal(t, "up", doc.Masters[2].Health.State)

	// Anything but "yes" aborts and changes nothing.
	for _, answer := range []string{"no\n", "YES\n", "", "y\n"} {
		r = runHealthCmd(t, answer, "apply", "-config", cfg)
		assert.Equal(t, ExitError, r.code, "answer %q", answer)
		assert.Contains(t, r.stdout, "Enter a value:")
		assert.Contains(t, r.stderr, "Apply cancelled")
		v, err := a.Client().ConfigGet(ctx, "maxmemory-policy").Result()
		require.NoError(t, err)
		assert.Equal(t, "allkeys-lru", v["maxmemory-policy"], "answer %q must not apply", answer)
	}

	r = runHealthCmd(t, "yes\n", "apply", "-config", cfg)
	assert.Equal(t, ExitOK, r.code, "%s%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, `master "a": changed maxmemory-policy: "allkeys-lru" -> "noeviction"`)
	assert.Contains(t, r.stdout, `master "a": changed appendonly: "no" -> "yes"`)
	assert.Contains(t, r.stdout, `master "b": changed maxmemory-policy: "volatile-ttl" -> "noeviction"`)
	assert.Contains(t, r.stdout, "the change lasts until the master restarts", "test masters have no config file to rewrite")
	assert.Contains(t, r.stdout, "Apply complete: 3 settings changed on 2 masters.")

	r = runHealthCmd(t, "", "plan", "-config", cfg, "-detailed-exitcode")
	assert.Equal(t, ExitOK, r.code, "%s%s", r.stdout, r.stderr)
	assert.Regexp(t, regexp.MustCompile(`(?m)^Plan: 0 settings to change on 0 masters; 0 errors, \d+ warnings?\.$`), r.stdout)

	r = runHealthCmd(t, "", "apply", "-auto-approve", "-config", cfg)
	assert.Equal(t, ExitOK, r.code)
	assert.Contains(t, r.stdout, "No changes to apply.")
	assert.NotContains(t, r.stdout, "Enter a value")
}

func TestPlanDetailedExitcodeChangesOnly(t *testing.T) {
	// appendfsync everysec with quarantine off: a warning and a change, no error.
	a := healthServer(t, "a", "--appendfsync", "everysec")
	cfg := writeHealthTopology(t, healthMaster{name: "a", addr: a.Addr()})
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"changes without -detailed-exitcode", []string{"plan", "-config", cfg}, ExitOK},
		{"changes with -detailed-exitcode", []string{"plan", "-config", cfg, "-detailed-exitcode"}, ExitChanges},
		{"extra argument", []string{"plan", "-config", cfg, "extra"}, ExitError},
		{"zero timeout", []string{"plan", "-config", cfg, "-timeout", "0s"}, ExitError},
		{"a typo of -detailed-exitcode is a usage error, not changes pending", []string{"plan", "-config", cfg, "-detailed-exitcod"}, ExitError},
		{"apply: usage error", []string{"apply", "-config", cfg, "-auto-aprove"}, ExitError},
		{"missing file", []string{"plan", "-config", filepath.Join(t.TempDir(), "missing.hcl")}, ExitError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runHealthCmd(t, "", tt.args...)
			assert.Equal(t, tt.want, r.code, "%s%s", r.stdout, r.stderr)
		})
	}
	r := runHealthCmd(t, "", "plan", "-config", cfg)
	assert.Contains(t, r.stdout, `~ appendfsync: "everysec" -> "always"`)
	assert.Contains(t, r.stdout, "Plan: 1 setting to change on 1 master; 0 errors,")
}

// An eviction policy the file does not fix is an error apply cannot fix: exit 1
// even with -detailed-exitcode.
func TestPlanUnfixableErrorExits1(t *testing.T) {
	a := healthServer(t, "a", "--maxmemory-policy", "allkeys-lru")
	b := healthServer(t, "b")
	b.Kill()
	cfg := writeHealthTopology(t, healthMaster{name: "a", addr: a.Addr()}, healthMaster{name: "b", addr: b.Addr()})
	r := runHealthCmd(t, "", "plan", "-config", cfg, "-detailed-exitcode", "-timeout", "2s")
	assert.Equal(t, ExitError, r.code, "%s%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "unreachable")
}

// Regression: a master whose CONFIG GET its user may not run (an ACL without
// +config|get) was counted "not checked", yet plan -detailed-exitcode exited 0,
// "no changes", to a CI gate that had checked nothing there.
func TestBugPlanSaidNoChangesWhenConfigGetWasRefused(t *testing.T) {
	const pw = "plan-acl-pw"
	a := healthServer(t, "a")
	b := healthServer(t, "b")
	require.NoError(t, b.Client().Do(context.Background(), "ACL", "SETUSER", "default", ">"+pw, "-config").Err())
	cfg := writeHealthTopology(t, healthMaster{name: "a", addr: a.Addr()}, healthMaster{name: "b", addr: b.Addr(), password: true})
	for _, args := range [][]string{{}, {"-detailed-exitcode"}, {"-json", "-detailed-exitcode"}} {
		r := runHealthCmd(t, "", append([]string{"plan", "-config", cfg, "-var", "pw=" + pw}, args...)...)
		assert.Equal(t, ExitError, r.code, "%v: %s%s", args, r.stdout, r.stderr)
		assert.Contains(t, r.stdout, "config-denied", "%v", args)
		assert.NotContains(t, r.stdout+r.stderr, pw, "%v", args)
	}
}
