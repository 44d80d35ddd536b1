package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUsageErrors(t *testing.T) {
	e := newEnv(t)
	bad := filepath.Join(t.TempDir(), "bad.hcl")
	require.NoError(t, os.WriteFile(bad, []byte("cluster \"x\" {\n  ttl = \"30\"\n}\n"), 0o600))
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"acquire"}, "missing lock NAME"},
		{[]string{"acquire", "x", "-bogus"}, "-bogus"},
		{[]string{"acquire", "x", "-ttl", "0s"}, "-ttl must be positive"},
		{[]string{"acquire", "x", "-ttl", "1h"}, "max_ttl"},
		{[]string{"acquire", "x", "-wait", "-1s"}, "-wait"},
		{[]string{"acquire", "x:fence"}, "reserved suffix"},
		{[]string{"extend", "x"}, "missing token"},
		{[]string{"release", "x"}, "missing token"},
		{[]string{"run", "x"}, "missing CMD"},
		{[]string{"run", "x", "-grace", "-1s", "--", "true"}, "-grace"},
		{[]string{"locks", "extra"}, "unexpected argument"},
		{[]string{"watch", "-interval", "0s"}, "-interval"},
		{[]string{"acquire", "x", "-config", bad}, "bad.hcl"},
		{[]string{"acquire", "x", "-config", filepath.Join(t.TempDir(), "missing.hcl")}, "missing.hcl"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := e.run(tt.args...)
			assert.Equal(t, 2, r.code, r.stderr)
			assert.Contains(t, r.stderr, tt.want)
			assert.Empty(t, e.keys("lock:x"), "nothing locked")
			if !strings.HasSuffix(tt.want, ".hcl") {
				// The reason and where the usage is, never the whole help.
				assert.Equal(t, 2, strings.Count(r.stderr, "\n"), r.stderr)
				assert.True(t, strings.HasSuffix(r.stderr, "\nrun 'redlock "+tt.args[0]+" -h' for usage\n"), r.stderr)
			}
		})
	}
	for _, name := range []string{"acquire", "extend", "release", "run", "locks", "force-expire", "watch"} {
		r := e.run("help", name)
		assert.Equal(t, 0, r.code)
		assert.Contains(t, r.stdout, "Exit codes", name)
	}
}
