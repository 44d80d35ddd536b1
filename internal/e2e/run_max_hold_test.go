package e2e

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Regression tests found by attacking the CLI as a careless or hostile user.

// run -max-hold shorter than -margin (by default TTL/5) took the lock, never
// started the command and exited 4 with "lock lost ... run was delayed": neither
// true nor the documented 5, and the lock was taken for nothing.
func TestAttackMaxHoldShorterThanMarginIsAUsageError(t *testing.T) {
	e := newEnv(t)
	r := e.run("run", "mh", "-ttl", "3s", "-max-hold", "300ms", "--", "true") // margin 600ms
	assert.Equal(t, 2, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stderr, "-max-hold")
	assert.NotContains(t, r.stderr, "lock lost")
	assert.Empty(t, e.keys("lock:mh"), "nothing was locked")
	// Long enough for the command to run: it runs.
	r = e.run("run", "mh", "-ttl", "3s", "-max-hold", "1s", "--", "echo", "ran")
	assert.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "ran")
}
