package hcl

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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
// TestReadmeExample loads every topology file the README and docs/ show (each
// ```hcl block with a cluster; the others are fragments of one), giving a value
// to each variable a block declares.
func TestReadmeExample(t *testing.T) {
	docs, err := filepath.Glob("../docs/*.md")
	require.NoError(t, err)
	blocks := 0
	for _, doc := range append([]string{"../README.md"}, docs...) {
		b, err := os.ReadFile(doc)
		require.NoError(t, err)
		rest := string(b)
		for {
			var src string
			var ok bool
			if _, rest, ok = strings.Cut(rest, "```hcl\n"); !ok {
				break
			}
			src, rest, ok = strings.Cut(rest, "```")
			require.True(t, ok, "%s: an hcl block is not closed", doc)
			if !strings.Contains(src, "cluster \"") {
				continue // a fragment of a cluster block, not a file
			}
			vars := map[string]string{}
			for _, m := range declaredVariable.FindAllStringSubmatch(src, -1) {
				vars[m[1]] = "x"
			}
			blocks++
			t.Run(fmt.Sprintf("%s#%d", filepath.Base(doc), blocks), func(t *testing.T) {
				cfg, diags := Load(filepath.Base(doc), []byte(src), Options{Getenv: noEnv, Vars: vars})
				require.False(t, diags.HasErrors(), "%v", diags)
				require.NotNil(t, cfg.Cluster)
			})
		}
	}
	assert.GreaterOrEqual(t, blocks, 2, "the README and docs/topology.md show topology files")
}

// declaredVariable finds the variables an HCL block declares.
var declaredVariable = regexp.MustCompile(`variable\s+"([^"]+)"`)
