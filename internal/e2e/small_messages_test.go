package e2e

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestBugTimeoutBeforeAnyMasterWasAsked: -timeout 1ns said "0 of 0 votes
// (quorum 3)", as if the cluster had no masters. It says that no master was
// asked.
func TestBugTimeoutBeforeAnyMasterWasAsked(t *testing.T) {
	e := newEnv(t)
	for _, args := range [][]string{{"acquire", "t1"}, {"acquire", "t1", "t2"}, {"acquire", "t3", "-permits", "2"}} {
		r := e.run(append(args, "-timeout", "1ns")...)
		assert.Equal(t, 1, r.code, r.stderr)
		assert.NotContains(t, r.stderr, "0 of 0", args)
		assert.Contains(t, r.stderr, "no master was asked", args)
	}
}
