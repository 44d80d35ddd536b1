package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestValidateMasters is the regression test for validate ignoring -masters (it
// checked the default file instead) and for an unparsable URL's password shown
// in the snippet under the error.
func TestValidateMasters(t *testing.T) {
	file := writeFile(t, t.TempDir(), "redlock.hcl", goodTopology)
	env := map[string]string{"REDLOCK_CONFIG": file} // a valid file that -masters must not fall back to
	tests := []struct {
		name     string
		args     []string
		wantCode int
		want     []string
		not      []string
	}{
		{"valid list", []string{"validate", "-masters", "127.0.0.1:7001,127.0.0.1:7002,redis://:hunter22@127.0.0.1:7003"}, ExitOK,
			[]string{`-masters is valid: cluster "masters", 3 masters, quorum 2`}, []string{"Password written in the file"}},
		{"invalid list is not the file", []string{"validate", "-masters", "127.0.0.1:7001,127.0.0.1:7001"}, ExitInvalid,
			[]string{"Duplicate master address", "-masters is invalid"}, []string{"is valid"}},
		{"unparsable URL", []string{"validate", "-masters", `redis://:hun"ter22@127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003`}, ExitInvalid,
			[]string{"Invalid master URL", "(sensitive)"}, nil},
		{"unparsable URL, json", []string{"validate", "-json", "-masters", `redis://:hun"ter22@127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003`}, ExitInvalid,
			[]string{`"valid": false`, "(sensitive)"}, nil},
		{"template syntax is text", []string{"validate", "-masters", "redis://:hunter22${var.x}@127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003"}, ExitInvalid,
			[]string{"Invalid master URL"}, []string{"var.x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, env, tt.args...)
			all := stdout + stderr
			assert.Equal(t, tt.wantCode, code, all)
			for _, w := range tt.want {
				assert.Contains(t, all, w)
			}
			for _, n := range append(tt.not, "hunter", "ter22") {
				assert.NotContains(t, all, n)
			}
		})
	}
}
