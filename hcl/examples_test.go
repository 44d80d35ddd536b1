package hcl

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExamples validates every examples/*.hcl, giving a value to each required
// variable, and checks that each is in canonical format.
func TestExamples(t *testing.T) {
	files, err := filepath.Glob("../examples/*.hcl")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 3)
	names := make([]string, 0, len(files))
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	sort.Strings(names)
	assert.Subset(t, names, []string{"local.hcl", "production.hcl", "three-masters.hcl"})
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			vars := map[string]string{}
			if filepath.Base(file) == "production.hcl" {
				vars["redis_password"] = "example-password"
			}
			cfg, diags := LoadFile(file, Options{Vars: vars, Getenv: noEnv})
			require.Empty(t, diags, diags.Error())
			require.NotNil(t, cfg.Cluster)
			assert.Equal(t, 1, len(cfg.Cluster.Masters)%2, "odd number of masters")
			src, err := os.ReadFile(file)
			require.NoError(t, err)
			out, err := Format(src)
			require.NoError(t, err)
			assert.Equal(t, string(src), string(out), "not in canonical format")
		})
	}
}

// The topology file shown in README.md is valid (the first hcl block there).
func TestReadmeExample(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(b), "```hcl\n")
	require.True(t, ok, "README.md shows a topology file")
	src, _, ok := strings.Cut(rest, "```")
	require.True(t, ok)
	cfg, diags := Load("README.md", []byte(src), Options{Getenv: noEnv, Vars: map[string]string{"redis_password": "x"}})
	require.False(t, diags.HasErrors(), "%v", diags)
	require.NotNil(t, cfg.Cluster)
}
