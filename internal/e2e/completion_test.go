package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// complete sources `redlock completion bash` in bash, completes words (the last one
// being typed) and returns COMPREPLY.
func (e *env) complete(t *testing.T, words ...string) []string {
	t.Helper()
	bash, err := exec.LookPath("bash")
	require.NoError(t, err)
	script := `source <(redlock completion bash) || exit 1
COMP_WORDS=(redlock "$@"); COMP_CWORD=$#
_redlock
printf '%s\n' "${COMPREPLY[@]}"`
	cmd := exec.Command(bash, append([]string{"-c", script, "bash"}, words...)...)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"), "REDLOCK_CONFIG="+e.config)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l != "" {
			got = append(got, l)
		}
	}
	return got
}

func TestBashCompletion(t *testing.T) {
	e := newEnv(t)
	e.acquireToken("billing/1")
	e.acquireToken("billing/2")
	e.acquireToken("reports/daily")
	e.acquireToken("nightly", "-permits", "3")
	el := e.start("elect", "crond", "--", "sleep", "30")
	e.waitKey("lock:crond:leader")
	defer el.cmd.Process.Kill()
	tests := []struct {
		words []string
		want  []string
	}{
		{[]string{"acq"}, []string{"acquire"}},
		{[]string{"re"}, []string{"release"}},
		{[]string{"acquire", "x", "-tt"}, []string{"-ttl"}},
		{[]string{"release", "bil"}, []string{"billing/1", "billing/2"}},
		{[]string{"force-expire", "-yes", "rep"}, []string{"reports/daily"}},
		{[]string{"force-expire", "billing/1", "bil"}, nil},                           // one NAME only
		{[]string{"release", "billing/1", "bil"}, []string{"billing/1", "billing/2"}}, // several names
		{[]string{"run", "billing/1", "--", "bil"}, nil},                              // CMD after --
		{[]string{"acquire", "x", "-per"}, []string{"-permits"}},
		{[]string{"run", "x", "-sha"}, []string{"-shared"}},
		{[]string{"acquire", "nig"}, []string{"nightly"}},       // a semaphore by its name
		{[]string{"leader", ""}, []string{"crond"}},             // elections only
		{[]string{"leader", "-watch", "cr"}, []string{"crond"}}, // -watch takes no value
		{[]string{"el"}, []string{"elect"}},
		{[]string{"help", "lo"}, []string{"locks"}},
		{[]string{"completion", "z"}, []string{"zsh"}},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, e.complete(t, tt.words...), "%v", tt.words)
	}
}

func TestCompletionScripts(t *testing.T) {
	e := newEnv(t)
	for _, sh := range []string{"bash", "zsh", "fish"} {
		r := e.run("completion", sh)
		require.Equal(t, 0, r.code, r.stderr)
		assert.Contains(t, r.stdout, "redlock __complete", sh)
	}
	r := e.run("completion", "bsh")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, `did you mean "bash"`)
}

// Regression: completion offered force-expire only the names acquire takes, though
// force-expire takes any name locks lists: a lock another library keeps in a hash
// was not offered. It is now, to force-expire only; a foreign name a shell would
// not take literally (a space) is offered to no command.
func TestForceExpireCompletesForeignNames(t *testing.T) {
	e := newEnv(t)
	e.acquireToken("legacy-own")
	ctx := context.Background()
	for _, s := range e.c.Servers {
		require.NoError(t, s.Client().HSet(ctx, "lock:legacy-redisson", "8f1c:1", 1).Err())
		require.NoError(t, s.Client().PExpire(ctx, "lock:legacy-redisson", time.Minute).Err())
		require.NoError(t, s.Client().Set(ctx, "lock:legacy report", "x", time.Minute).Err())
	}
	assert.Equal(t, []string{"legacy-own", "legacy-redisson"}, e.complete(t, "force-expire", "leg"))
	assert.Equal(t, []string{"legacy-own"}, e.complete(t, "release", "leg"))
}
