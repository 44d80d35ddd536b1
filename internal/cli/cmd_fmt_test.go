package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const unformatted = "cluster \"t\" {\nttl = \"30s\"\n    node_timeout=\"50ms\"\n}\n"
const formatted = "cluster \"t\" {\n  ttl          = \"30s\"\n  node_timeout = \"50ms\"\n}\n"

func TestFmt(t *testing.T) {
	tests := []struct {
		name   string
		src    string
		args   []string // FILE is appended unless useConfig
		config bool     // pass the file with -config instead
		code   int
		stdout []string
		after  string // file content after the run
		stderr string
	}{
		{name: "rewrites", src: unformatted, code: 0, stdout: []string{"redlock.hcl"}, after: formatted},
		{name: "already formatted", src: formatted, code: 0, after: formatted},
		{name: "check unformatted", src: unformatted, args: []string{"-check"}, code: 3, stdout: []string{"redlock.hcl"}, after: unformatted},
		{name: "check formatted", src: formatted, args: []string{"-check"}, code: 0, after: formatted},
		{name: "diff", src: unformatted, args: []string{"-check", "-diff"}, code: 3,
			stdout: []string{"--- a/", "+++ b/", "-ttl = \"30s\"", "+  ttl          = \"30s\""}, after: unformatted},
		{name: "default file is -config", src: unformatted, config: true, code: 0, after: formatted},
		{name: "parse error", src: "cluster \"t\" {\n  ttl = \"30s\n}\n", code: 2, stderr: "line 2", after: "cluster \"t\" {\n  ttl = \"30s\n}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeFile(t, t.TempDir(), "redlock.hcl", tt.src)
			args := append([]string{"fmt"}, tt.args...)
			if tt.config {
				args = append(args, "-config", p)
			} else {
				args = append(args, p)
			}
			code, stdout, stderr := runCLI(t, nil, args...)
			assert.Equal(t, tt.code, code, stderr)
			for _, w := range tt.stdout {
				assert.Contains(t, stdout, w)
			}
			if tt.stderr != "" {
				assert.Contains(t, stderr, tt.stderr)
			}
			got, err := os.ReadFile(p)
			require.NoError(t, err)
			assert.Equal(t, tt.after, string(got))
		})
	}
}

func TestFmtDirectoryAndStdin(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.hcl", unformatted)
	b := writeFile(t, dir, "b.hcl", formatted)
	writeFile(t, dir, "notes.txt", unformatted)
	code, stdout, _ := runCLI(t, nil, "fmt", "-check", dir)
	assert.Equal(t, ExitUnformat, code)
	assert.Equal(t, a+"\n", stdout)
	_ = b

	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(unformatted), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	assert.Equal(t, ExitOK, Main(context.Background(), env, []string{"fmt", "-"}))
	assert.Equal(t, formatted, out.String())

	code, _, stderr := runCLI(t, nil, "fmt", filepath.Join(dir, "missing.hcl"))
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, stderr, "missing.hcl")

	code, stdout, _ = runCLI(t, nil, "fmt", "-h")
	assert.Equal(t, ExitOK, code)
	assert.Contains(t, stdout, "Exit codes:")

	code, _, stderr = runCLI(t, nil, "fmt", "-nope")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, stderr, "-nope")
}

func TestFmtRecursive(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"top.hcl":            unformatted,
		"env/prod/lock.hcl":  unformatted,
		"env/dev/lock.hcl":   formatted,
		".git/ignored.hcl":   unformatted,
		"env/prod/notes.txt": "not hcl",
	}
	for name, src := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(src), 0o600))
	}
	r := runHealthCmd(t, "", "fmt", "-check", dir)
	assert.Equal(t, ExitUnformat, r.code)
	assert.NotContains(t, r.stdout, "prod", "without -recursive only the directory itself")

	r = runHealthCmd(t, "", "fmt", "-recursive", dir)
	require.Equal(t, ExitOK, r.code, r.stderr)
	for _, name := range []string{"top.hcl", "env/prod/lock.hcl", "env/dev/lock.hcl"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		assert.Equal(t, formatted, string(b), name)
	}
	b, err := os.ReadFile(filepath.Join(dir, ".git/ignored.hcl"))
	require.NoError(t, err)
	assert.Equal(t, unformatted, string(b), "hidden directories are skipped")
	r = runHealthCmd(t, "", "fmt", "-check", "-recursive", dir)
	assert.Equal(t, ExitOK, r.code)
}

// Issue 23 item 16: the second hunk's new-file start counts the lines that the
// first hunk added (as diff -u and terraform fmt -diff number it). go-udiff's own
// header said +12 where diff -u says +14 here.
func TestFmtDiffHunkHeaders(t *testing.T) {
	var a, b []string
	for i := 1; i <= 40; i++ {
		l := fmt.Sprintf("line %d", i)
		a = append(a, l)
		switch i {
		case 2:
			b = append(b, "new a", "new b", l)
		case 5, 30:
			b = append(b, l+" changed")
		default:
			b = append(b, l)
		}
	}
	got := unifiedDiff("a", "b", strings.Join(a, "\n")+"\n", strings.Join(b, "\n")+"\n")
	hdr := regexp.MustCompile(`(?m)^@@ -(\d+),(\d+) \+(\d+),(\d+) @@$`)
	hunks := hdr.FindAllStringSubmatch(got, -1)
	require.Len(t, hunks, 2, got)
	assert.Equal(t, []string{"27", "7", "29", "7"}, hunks[1][1:], "the second hunk starts 2 lines later in the new file:\n%s", got)
	// Every hunk's new start is its old start shifted by what came before.
	shift := 0
	for _, h := range hunks {
		n := func(i int) int { v, _ := strconv.Atoi(h[i]); return v }
		assert.Equal(t, n(1)+shift, n(3), h[0])
		shift += n(4) - n(2)
	}
}
