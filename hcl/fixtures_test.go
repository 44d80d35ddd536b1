package hcl

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	hclv2 "github.com/hashicorp/hcl/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// expectation is one "# ERROR: text" or "# WARNING: text" comment of a fixture. An
// "@-N" after the word shifts the expected line up by N (for a second diagnostic
// on the same line).
type expectation struct {
	line     int
	severity string
	text     string
}

var expectRE = regexp.MustCompile(`#\s*(ERROR|WARNING)(@-(\d+))?:\s*(.*?)\s*$`)

func expectations(t *testing.T, src []byte) []expectation {
	t.Helper()
	var out []expectation
	sc := bufio.NewScanner(bytes.NewReader(src))
	for n := 1; sc.Scan(); n++ {
		m := expectRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		line := n
		if m[3] != "" {
			off, err := strconv.Atoi(m[3])
			require.NoError(t, err)
			line -= off
		}
		out = append(out, expectation{line: line, severity: strings.ToLower(m[1]), text: m[4]})
	}
	return out
}

func severityName(s hclv2.DiagnosticSeverity) string {
	if s == hclv2.DiagWarning {
		return "warning"
	}
	return "error"
}

// TestFixtures loads every file under testdata/errors and checks that the
// diagnostics are exactly those its comments announce: same line, same severity,
// the comment text a substring of "summary: detail".
func TestFixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/errors/*.hcl")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			src, err := os.ReadFile(file)
			require.NoError(t, err)
			want := expectations(t, src)
			require.NotEmpty(t, want, "fixture without expectations")
			cfg, diags := Load(file, src, Options{Getenv: noEnv})
			require.NotNil(t, cfg)

			var got []string
			for _, d := range diags {
				require.NotNil(t, d.Subject, "diagnostic without a range: %s", d.Summary)
				assert.Equal(t, file, d.Subject.Filename)
				got = append(got, fmt.Sprintf("%d %s %s: %s", d.Subject.Start.Line, severityName(d.Severity), d.Summary, d.Detail))
			}
			used := make([]bool, len(got))
			for _, w := range want {
				found := false
				for i, g := range got {
					prefix := fmt.Sprintf("%d %s ", w.line, w.severity)
					if !used[i] && strings.HasPrefix(g, prefix) && strings.Contains(g, w.text) {
						used[i], found = true, true
						break
					}
				}
				assert.True(t, found, "line %d: want %s containing %q; got:\n%s", w.line, w.severity, w.text, strings.Join(got, "\n"))
			}
			for i, g := range got {
				assert.True(t, used[i], "unexpected diagnostic: %s", g)
			}
			if diags.HasErrors() {
				assert.Nil(t, cfg.Cluster, "a file with errors yields no cluster")
			} else {
				assert.NotNil(t, cfg.Cluster, "a file with only warnings yields a cluster")
			}
		})
	}
}
