package e2e

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFileWarningsOncePerChange: the topology file's warnings came out on every
// acquire, run, release and events (six lines in every cron mail), and once per
// worker of bench. The lock commands show them once per content of the file and
// never under -json; plan shows them every time; REDLOCK_WARNINGS=always shows
// them on every command.
func TestFileWarningsOncePerChange(t *testing.T) {
	e := newEnv(t)
	const warning = "Duplicate lock pattern"
	dup := `  lock "pool/*" {
    permits = 2
  }
  lock "pool/*" {
    permits = 2
  }`
	cfg := e.variant("warn.hcl", `  lock "pool/*" {
    permits = 2
  }`, dup)
	run := func(env []string, args ...string) result {
		t.Helper()
		cmd := e.command("", append([]string{args[0], "-config", cfg}, args[1:]...)...)
		cmd.Env = append(cmd.Env, env...)
		return finish(t, cmd)
	}
	type step struct {
		name  string
		env   []string
		args  []string
		shown bool
	}
	steps := []step{
		{"-json never", nil, []string{"acquire", "w1", "-ttl", "5s", "-json"}, false},
		{"first command", nil, []string{"acquire", "w2", "-ttl", "5s"}, true},
		{"second command", nil, []string{"acquire", "w3", "-ttl", "5s"}, false},
		{"run", nil, []string{"run", "w4", "true"}, false},
		{"locks", nil, []string{"locks"}, false},
		{"plan every time", nil, []string{"plan"}, true},
		{"REDLOCK_WARNINGS=always", []string{"REDLOCK_WARNINGS=always"}, []string{"acquire", "w5", "-ttl", "5s"}, true},
	}
	for _, s := range steps {
		r := run(s.env, s.args...)
		if s.name != "plan every time" {
			require.Equal(t, 0, r.code, "%s: %s", s.name, r.stderr)
		}
		assert.Equal(t, s.shown, strings.Contains(r.stderr, warning), "%s: %s", s.name, r.stderr)
		assert.NotContains(t, r.stdout, warning, s.name)
	}

	// The file changes: shown once again.
	src, err := os.ReadFile(cfg)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cfg, append(src, "# edited\n"...), 0o600))
	r := run(nil, "acquire", "w6", "-ttl", "5s")
	assert.Contains(t, r.stderr, warning, "the file changed")
	r = run(nil, "acquire", "w7", "-ttl", "5s")
	assert.NotContains(t, r.stderr, warning)

	// bench: once for the whole run (its workers say nothing), on a fresh change.
	require.NoError(t, os.WriteFile(cfg, append(src, "# edited again\n"...), 0o600))
	r = run(nil, "bench", "-clients", "3", "-ops", "2")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, 1, strings.Count(r.stderr, warning), r.stderr)
}
