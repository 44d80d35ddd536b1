package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runCLI runs Main with buffers and an environment given as a map.
func runCLI(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] }}
	code = Main(context.Background(), e, args)
	return code, out.String(), errb.String()
}

func writeFile(t *testing.T, dir, name, src string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
	return p
}

const goodTopology = `cluster "t" {
  master "a" { address = "127.0.0.1:7001" }
  master "b" { address = "127.0.0.1:7002" }
  master "c" { address = "127.0.0.1:7003" }
}
`

// TestValidateNewUserMistakes are the four mistakes a new user makes first: each
// must say what is wrong and where, and exit 2.
func TestValidateNewUserMistakes(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{
			name: "typo in attribute name",
			src:  "cluster \"t\" {\n  node_timout = \"10ms\"\n  master \"a\" { address = \"127.0.0.1:7001\" }\n}\n",
			want: []string{"Error: Unsupported argument", "line 2", "node_timout", `Did you mean "node_timeout"?`},
		},
		{
			name: "missing quote",
			src:  "cluster \"t\" {\n  master \"a\" {\n    address = \"127.0.0.1:7001\n  }\n}\n",
			want: []string{"Error: Unterminated template string", "line 3", `address = "127.0.0.1:7001`},
		},
		{
			name: "duration without unit",
			src:  "cluster \"t\" {\n  ttl = \"30\"\n  master \"a\" { address = \"127.0.0.1:7001\" }\n}\n",
			want: []string{"Error: Duration needs a unit", "line 2", `ttl = "30"`, `e.g. "30s"`},
		},
		{
			name: "duplicate master",
			src:  "cluster \"t\" {\n  master \"a\" { address = \"127.0.0.1:7001\" }\n  master \"b\" { address = \"127.0.0.1:7002\" }\n  master \"a\" { address = \"127.0.0.1:7003\" }\n}\n",
			want: []string{"Error: Duplicate master name", "line 4", `master "a" is declared twice`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeFile(t, t.TempDir(), "redlock.hcl", tt.src)
			code, stdout, stderr := runCLI(t, nil, "validate", "-config", p)
			assert.Equal(t, ExitInvalid, code)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, "on "+p+" ")
			for _, w := range tt.want {
				assert.Contains(t, stderr, w)
			}
			assert.Contains(t, stderr, "is invalid")
		})
	}
}

func TestValidate(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "good.hcl", goodTopology)
	warn := writeFile(t, dir, "warn.hcl", "cluster \"t\" {\n  master \"a\" { address = \"127.0.0.1:7001\" }\n}\n")
	secret := writeFile(t, dir, "secret.hcl", "variable \"pw\" { sensitive = true }\ncluster \"t\" {\n  key_prefix = var.pw\n  master \"a\" {\n    address  = \"127.0.0.1:7001\"\n    password = var.pw\n  }\n}\n")
	tests := []struct {
		name       string
		env        map[string]string
		args       []string
		code       int
		stdout     []string
		stderr     []string
		notInOut   string
		jsonValid  *bool
		jsonErrors int
	}{
		{name: "valid", args: []string{"-config", good}, code: 0, stdout: []string{"is valid", `cluster "t"`, "3 masters", "quorum 2"}},
		{name: "config from env", env: map[string]string{"REDLOCK_CONFIG": good}, code: 0, stdout: []string{good + " is valid"}},
		{name: "double dash json", args: []string{"--json", "-config", good}, code: 0, jsonValid: ptr(true)},
		{name: "warnings exit 0", args: []string{"-config", warn}, code: 0, stdout: []string{"1 warning(s)"}, stderr: []string{"Warning: Fewer than 3 masters"}},
		{name: "missing file", args: []string{"-config", filepath.Join(dir, "none.hcl")}, code: 2, stderr: []string{"Cannot read the topology file", "none.hcl"}},
		{name: "missing file json", args: []string{"-json", "-config", filepath.Join(dir, "none.hcl")}, code: 2, jsonValid: ptr(false), jsonErrors: 1},
		{name: "default path", code: 2, stderr: []string{"./redlock.hcl"}},
		{name: "sensitive misuse", args: []string{"-config", secret, "-var", "pw=Hunter2Secret"}, code: 2,
			stderr: []string{"Sensitive value not allowed here", "line 3"}, notInOut: "Hunter2Secret"},
		{name: "sensitive misuse json", args: []string{"-json", "-config", secret, "-var", "pw=Hunter2Secret"}, code: 2,
			jsonValid: ptr(false), jsonErrors: 1, notInOut: "Hunter2Secret"},
		{name: "var from env", env: map[string]string{"REDLOCK_VAR_pw": "Hunter2Secret"}, args: []string{"-config", secret}, code: 2,
			stderr: []string{"Sensitive value not allowed here"}, notInOut: "Hunter2Secret"},
		{name: "bad var flag", args: []string{"-config", good, "-var", "novalue"}, code: 2, stderr: []string{"-var", "want NAME=VALUE", "run 'redlock validate -h' for usage"}},
		{name: "bad timeout", args: []string{"-config", good, "-timeout", "0s"}, code: 2, stderr: []string{"-timeout 0s: must be positive"}},
		{name: "stray argument", args: []string{good}, code: 2, stderr: []string{"unexpected argument", "-config"}},
		{name: "help", args: []string{"-h"}, code: 0, stdout: []string{"Exit codes:", "-json", "-var NAME=VALUE"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.env, append([]string{"validate"}, tt.args...)...)
			assert.Equal(t, tt.code, code, "stderr: %s", stderr)
			for _, w := range tt.stdout {
				assert.Contains(t, stdout, w)
			}
			for _, w := range tt.stderr {
				assert.Contains(t, stderr, w)
			}
			if tt.notInOut != "" {
				assert.NotContains(t, stdout+stderr, tt.notInOut)
			}
			if tt.jsonValid != nil {
				var rep struct {
					Valid       bool `json:"valid"`
					ErrorCount  int  `json:"error_count"`
					Diagnostics []struct {
						Severity string `json:"severity"`
					} `json:"diagnostics"`
				}
				require.NoError(t, json.Unmarshal([]byte(stdout), &rep), stdout)
				assert.Equal(t, *tt.jsonValid, rep.Valid)
				assert.Equal(t, tt.jsonErrors, rep.ErrorCount)
				assert.Empty(t, stderr)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestVarFlag(t *testing.T) {
	tests := []struct {
		in      []string
		want    map[string]string
		wantErr string
	}{
		{in: []string{"a=1", "b=x=y", "a=2"}, want: map[string]string{"a": "2", "b": "x=y"}},
		{in: []string{"empty="}, want: map[string]string{"empty": ""}},
		{in: []string{"novalue"}, wantErr: "want NAME=VALUE"},
		{in: []string{"=v"}, wantErr: "want NAME=VALUE"},
		{in: []string{"9x=v"}, wantErr: "not a valid variable name"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.in, " "), func(t *testing.T) {
			var v varFlag
			var err error
			for _, s := range tt.in {
				if err = v.Set(s); err != nil {
					break
				}
			}
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, v.m)
			assert.NotContains(t, v.String(), "x=y", "String lists names, never values")
		})
	}
}

// TestCommonLoad checks the shared loader that the other commands use: exit 2 with
// the file:line message on an invalid file, warnings printed on a valid one.
func TestCommonLoad(t *testing.T) {
	dir := t.TempDir()
	bad := writeFile(t, dir, "bad.hcl", "cluster \"t\" {\n  ttl = \"30\"\n}\n")
	warn := writeFile(t, dir, "warn.hcl", "cluster \"t\" {\n  master \"a\" { address = \"127.0.0.1:7001\" }\n}\n")
	for _, tt := range []struct {
		file   string
		code   int
		stderr string
	}{
		{bad, ExitInvalid, "line 2"},
		{warn, ExitOK, "Warning: Fewer than 3 masters"},
	} {
		var errb bytes.Buffer
		env := &Env{Stdout: &bytes.Buffer{}, Stderr: &errb, Getenv: func(string) string { return "" }}
		c := common{config: tt.file, timeout: DefaultTimeout}
		cfg, err := c.load(env)
		require.NotNil(t, cfg)
		code := ExitOK
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		}
		assert.Equal(t, tt.code, code)
		assert.Contains(t, errb.String(), tt.stderr)
		assert.Equal(t, code == ExitOK, cfg.Cluster != nil)
	}
}
