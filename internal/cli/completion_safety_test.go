package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestShellSafe(t *testing.T) {
	tests := []struct {
		name string
		safe bool
	}{
		{"billing/invoice-42", true},
		{"jobs:nightly@eu,v=2%", true},
		{"überweisung_1", true},
		{"$(touch${IFS}x)", false},
		{"a`id`", false},
		{"a;rm", false},
		{"a|b", false},
		{"a>b", false},
		{"it's", false},
		{`a"b`, false},
		{`a\b`, false},
		{"a*", false},
		{"~root", false},
		{"a b", false},
		{"a\x1b[31m", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.safe, shellSafe(tt.name))
		})
	}
}

// TestCompletionNeverOffersHostileNames is the regression test for the bash
// script running command substitutions found in lock names: with a lock named
// "$(touch ...)" on the masters, completing "redlock release " neither runs it
// nor offers it.
func TestCompletionNeverOffersHostileNames(t *testing.T) {
	a := healthServer(t, "a")
	b := healthServer(t, "b")
	c := healthServer(t, "c")
	cfg := writeHealthTopology(t, healthMaster{name: "a", addr: a.Addr()}, healthMaster{name: "b", addr: b.Addr()}, healthMaster{name: "c", addr: c.Addr()})
	marker := filepath.Join(t.TempDir(), "pwned")
	hostile := "x$(touch${IFS}" + marker + ")"
	for _, name := range []string{"job-1", hostile} {
		r := runHealthCmd(t, "", "acquire", name, "-config", cfg, "-ttl", "1m")
		require.Equal(t, ExitOK, r.code, "%s%s", r.stdout, r.stderr)
	}
	r := runHealthCmd(t, "", "__complete", "release", "-config", cfg, "")
	assert.Equal(t, "job-1\n", r.stdout)
	r = runHealthCmd(t, "", "__complete", "release", "-config", cfg, "x")
	assert.Empty(t, r.stdout)
	_, err := os.Stat(marker)
	assert.True(t, os.IsNotExist(err))
}

// TestBashScriptDoesNotExpandCandidates: even a candidate with a command
// substitution or a glob (from an older redlock, say) is taken literally by the
// bash script, never run or expanded.
func TestBashScriptDoesNotExpandCandidates(t *testing.T) {
	bash, err := exec.LookPath("bash")
	require.NoError(t, err)
	dir := t.TempDir()
	marker := filepath.Join(dir, "pwned")
	stub := "#!/bin/sh\nprintf '%s\\n' 'x$(touch " + marker + ")' 'x*' 'x`touch " + marker + "`'\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "redlock"), []byte(stub), 0o755))
	r := runHealthCmd(t, "", "completion", "bash")
	require.Equal(t, ExitOK, r.code)
	script := r.stdout + "\nCOMP_WORDS=(redlock release x); COMP_CWORD=2\ncd " + dir + "\n_redlock\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
	cmd := exec.Command(bash, "--norc", "--noprofile", "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Equal(t, []string{"x$(touch " + marker + ")", "x*", "x`touch " + marker + "`"}, strings.Split(strings.TrimSpace(string(out)), "\n"))
	_, err = os.Stat(marker)
	assert.True(t, os.IsNotExist(err), "a candidate was run")
}
