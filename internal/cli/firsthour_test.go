package cli

import (
	"encoding/json"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"-v"}} {
		r := runHealthCmd(t, "", args...)
		assert.Equal(t, ExitOK, r.code, "%v", args)
		assert.Contains(t, r.stdout, "redlock ")
		assert.Contains(t, r.stdout, runtime.Version())
	}
	r := runHealthCmd(t, "", "version", "-json")
	require.Equal(t, ExitOK, r.code)
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &v))
	assert.Equal(t, formatVersion, v["format_version"])
	assert.Equal(t, runtime.Version(), v["go_version"])
	assert.NotEmpty(t, v["version"])
}

func TestSuggestions(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"aquire"}, `unknown command "aquire" (did you mean "acquire"?)`},
		{[]string{"relase"}, `(did you mean "release"?)`},
		{[]string{"help", "lcks"}, `(did you mean "locks"?)`},
		{[]string{"acquire", "x", "-tll", "5s"}, `unknown flag -tll (did you mean "-ttl"?)`},
		{[]string{"plan", "-detailed-exitcod"}, `(did you mean "-detailed-exitcode"?)`},
		{[]string{"zzzzzzzz"}, `unknown command "zzzzzzzz"`},
	}
	for _, tt := range tests {
		r := runHealthCmd(t, "", tt.args...)
		assert.NotEqual(t, ExitOK, r.code, "%v", tt.args)
		assert.Contains(t, r.stderr, tt.want, "%v", tt.args)
	}
	r := runHealthCmd(t, "", "zzzzzzzz")
	assert.NotContains(t, r.stderr, "did you mean", "nothing close enough")
	// Bare redlock: the command list, as a usage error (Terraform's convention).
	r = runHealthCmd(t, "")
	assert.Equal(t, ExitUsage, r.code)
	assert.Contains(t, r.stderr, "Commands:")
}
