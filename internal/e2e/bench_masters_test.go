package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// TestBugBenchWithoutATopologyFile: bench with -masters or REDLOCK_MASTERS and
// no file: every worker process looked for ./redlock.hcl and failed. The workers
// use the same masters, and every acquisition is made.
func TestBugBenchWithoutATopologyFile(t *testing.T) {
	c := redistest.Start(t, 3, redistest.Options{})
	list := strings.Join(c.Addrs(), ",")
	tests := []struct {
		name string
		args []string
		env  []string
	}{
		{"-masters", []string{"-masters", list}, nil},
		{"REDLOCK_MASTERS", nil, []string{"REDLOCK_MASTERS=" + list}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(bin, append([]string{"bench", "-clients", "2", "-ops", "3", "-json"}, tt.args...)...)
			cmd.Dir = t.TempDir() // no ./redlock.hcl
			cmd.Env = append(withoutEnv(os.Environ(), "REDLOCK_CONFIG", "REDLOCK_MASTERS"), tt.env...)
			r := finish(t, cmd)
			require.Equal(t, 0, r.code, r.stderr)
			assert.NotContains(t, r.stderr, "redlock.hcl")
			doc := checkDoc(t, "bench", r.stdout)
			assert.Contains(t, r.stdout, `"acquired": 3`, doc)
			assert.Contains(t, r.stderr, "on 3 masters")
		})
	}
}

// withoutEnv returns env without the variables named.
func withoutEnv(env []string, names ...string) []string {
	var out []string
	for _, kv := range env {
		keep := true
		for _, n := range names {
			if strings.HasPrefix(kv, n+"=") {
				keep = false
			}
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}

// TestMaxTTLWithoutAFile: with -masters the 5 min max_ttl could not be raised
// (no file to declare it in): REDLOCK_MAX_TTL raises it, and the error for a
// -ttl above the cap says so.
func TestMaxTTLWithoutAFile(t *testing.T) {
	c := redistest.Start(t, 3, redistest.Options{})
	list := strings.Join(c.Addrs(), ",")
	run := func(env []string, args ...string) result {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(withoutEnv(os.Environ(), "REDLOCK_CONFIG", "REDLOCK_MASTERS", "REDLOCK_MAX_TTL"), env...)
		return finish(t, cmd)
	}
	r := run(nil, "acquire", "long", "-masters", list, "-ttl", "10m")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "above the cluster's max_ttl 5m00s (no file: raise it with REDLOCK_MAX_TTL=D)")
	r = run([]string{"REDLOCK_MAX_TTL=1h"}, "acquire", "long", "-masters", list, "-ttl", "10m", "-json")
	require.Equal(t, 0, r.code, r.stderr)
	validity, err := strconv.ParseFloat(fmt.Sprint(checkDoc(t, "acquire", r.stdout)["validity_ms"]), 64)
	require.NoError(t, err)
	assert.Greater(t, validity, float64(9*60*1000), "a 10m lock")
	r = run([]string{"REDLOCK_MAX_TTL=soon"}, "acquire", "long2", "-masters", list)
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "REDLOCK_MAX_TTL")
}
