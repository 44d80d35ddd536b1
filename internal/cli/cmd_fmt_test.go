package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
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
