package quorum

import "testing"

// withoutRace skips t when the race detector is on: t is one of the heavy
// scenario tests that the CI runs in a step of their own, without it
// (scripts/test.sh, "the heavy scenarios"). Under the race detector on two cores
// their rounds missed node timeouts of 50-100 ms on every master at once, and
// the tests failed on what the machine did, not on the algorithm: the mutants'
// scenarios (a free lock not taken in 2 s) and the soak's liveness floor. The
// race detector still sees the same code paths in TestScenarios, the primitives'
// scenarios and a shorter soak (soakDuration).
func withoutRace(t *testing.T) {
	t.Helper()
	if raceOn {
		t.Skip("a heavy scenario test: run without the race detector (scripts/test.sh runs it in a step of its own)")
	}
}
