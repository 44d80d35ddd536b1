package quorum

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestMutantsAreCaught proves the checker bites: each deliberately broken variant
// of the algorithm runs a scenario that the correct algorithm passes
// (TestScenarios), and the checker must report at least one violation.
func TestMutantsAreCaught(t *testing.T) {
	tests := []struct {
		name string
		mut  mutants
		fn   scenario
	}{
		{"quorum N/2", mutants{halfQuorum: true}, scenOverlappingMajorities},
		{"validity from reply time", mutants{validityFromReply: true}, scenSlowTwo},
		{"no drift term", mutants{noDrift: true}, scenClockDrift(0.97)},
		{"plain DEL release", mutants{plainDelRelease: true}, scenEdgeCases},
		{"extend recreates missing keys", mutants{extendRecreates: true}, scenEdgeCases},
		{"no release after a failed round", mutants{noReleaseOnFail: true}, scenPartitionThree},
		{"go-redis default options", mutants{defaultClientOptions: true}, scenPartitionThree},
		{"unvalidated extend ttl", mutants{unvalidatedExtendTTL: true}, scenEdgeCases},
		{"lost signalled late", mutants{lateCancel: 60 * time.Millisecond}, scenRivalPolls},
		{"lost signalled late with keep-alive", mutants{lateCancel: 60 * time.Millisecond}, scenKeepAliveInFlightAtExpiry},
		{"pipeline reads an abandoned reply as the next", mutants{skipAbandoned: true}, func(s *scen) { scenPipelineStress(5*time.Second, false)(s) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newScen(t, tt.mut, 5)
			tt.fn(s)
			v := s.rec.Violations()
			for _, x := range v {
				t.Logf("caught: %s: %s", x.Kind, x.Detail)
			}
			assert.NotEmpty(t, v, "mutant %q was not caught (seed %d)", tt.name, s.rec.Seed)
		})
	}
}
