package e2e

import (
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBugTimeoutBeforeAnyMasterWasAsked: -timeout 1ns said "0 of 0 votes
// (quorum 3)", as if the cluster had no masters. It says that no master was
// asked.
func TestBugTimeoutBeforeAnyMasterWasAsked(t *testing.T) {
	e := newEnv(t)
	for _, args := range [][]string{{"acquire", "t1"}, {"acquire", "t1", "t2"}, {"acquire", "t3", "-permits", "2"}} {
		r := e.run(append(args, "-timeout", "1ns")...)
		assert.Equal(t, 1, r.code, r.stderr)
		assert.NotContains(t, r.stderr, "0 of 0", args)
		assert.Contains(t, r.stderr, "no master was asked", args)
	}
}

// TestBugNotRedisFindingEscapedOnce: a peer that answers HTTP was reported by
// nodes and plan as `invalid reply: "<!DOCTYPE HTML>\\\\n"`: the finding was
// escaped by the findings' writer and again by the command.
func TestBugNotRedisFindingEscapedOnce(t *testing.T) {
	e := newEnv(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	go func() { // answers every line with a two-line HTML reply and a tab
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 4096)
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
					_, _ = c.Write([]byte("<!DOCTYPE HTML>\n<p>\tno</p>\n"))
				}
			}()
		}
	}()
	cfg := e.withMasterAt(ln.Addr().String(), false)
	for _, cmd := range []string{"nodes", "plan"} {
		r := e.run(cmd, "-config", cfg)
		line := ""
		for _, l := range strings.Split(r.stdout, "\n") {
			if strings.Contains(l, "not-redis:") {
				line = l
			}
		}
		require.NotEmpty(t, line, "%s: %s", cmd, r.stdout)
		assert.Contains(t, line, `<!DOCTYPE HTML>\\n`, cmd) // the server's \n, quoted by the client, escaped once
		assert.NotContains(t, line, `\\\\`, "%s: escaped twice: %s", cmd, line)
	}
}

// TestBugWideCharactersKeepLocksColumns: a name with wide characters (an emoji,
// CJK letters) shifted every column after it in locks: widths were counted in
// runes, the terminal shows two cells for each of those.
func TestBugWideCharactersKeepLocksColumns(t *testing.T) {
	e := newEnv(t)
	names := []string{"job-🚀🚀", "仕事-abcdef", "plain-name-long"}
	for _, n := range names {
		e.acquireToken(n, "-ttl", "9s")
	}
	r := e.run("locks")
	require.Equal(t, 0, r.code, r.stderr)
	cols := map[int]bool{} // where the STATE column starts, in terminal cells
	for _, l := range strings.Split(r.stdout, "\n") {
		for _, n := range append(names, "NAME") {
			if strings.HasPrefix(l, n+" ") {
				state := strings.TrimLeft(strings.TrimPrefix(l, n), " ")
				cols[runewidth.StringWidth(l)-runewidth.StringWidth(state)] = true
			}
		}
	}
	assert.Len(t, cols, 1, "every row's STATE starts in the same column:\n%s", r.stdout)
}

// TestBugHelpSentencesWhole: acquire -h ended exit code 3's row mid-sentence
// ("or -wait expired while it was"); completion tcsh suggested bash as a typo.
func TestBugHelpSentencesWhole(t *testing.T) {
	e := &env{t: t}
	tests := []struct {
		args      []string
		code      int
		out       string // on stdout or stderr
		forbidden string
	}{
		{[]string{"acquire", "-h"}, 0, "still\n       held when -wait D ran out, or NAME held as another kind of hold\n", "while it was\n"},
		{[]string{"completion", "tcsh"}, 2, "no completion script for tcsh: there are scripts for bash, zsh and fish only", "did you mean"},
		{[]string{"completion", "zhs"}, 2, `(did you mean "zsh"?)`, ""},
	}
	for _, tt := range tests {
		r := e.run(tt.args...)
		assert.Equal(t, tt.code, r.code, tt.args)
		assert.Contains(t, r.stdout+r.stderr, tt.out, tt.args)
		if tt.forbidden != "" {
			assert.NotContains(t, r.stdout+r.stderr, tt.forbidden, tt.args)
		}
	}
}

// TestBugNoFileNamesTheMastersFlag: without ./redlock.hcl the error named only
// -config and REDLOCK_CONFIG: a newcomer with three masters and no file did not
// learn of -masters.
func TestBugNoFileNamesTheMastersFlag(t *testing.T) {
	cmd := exec.Command(bin, "acquire", "job")
	cmd.Dir = t.TempDir()
	cmd.Env = withoutEnv(os.Environ(), "REDLOCK_CONFIG", "REDLOCK_MASTERS")
	r := finish(t, cmd)
	assert.Equal(t, 2, r.code)
	for _, want := range []string{"-config PATH", "REDLOCK_CONFIG", "-masters host:port", "REDLOCK_MASTERS"} {
		assert.Contains(t, r.stderr, want)
	}
}
