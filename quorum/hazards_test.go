package quorum

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// hazard is a fault outside Redlock's model, run without its mitigations, and the
// mitigations that remove its harm.
type hazard struct {
	name        string
	fn          scenario
	mitigations []mitigation
}

// mitigation is a hazard's scenario run with one mitigation on.
type mitigation struct {
	name string
	fn   scenario
	args []string
	// fenced: the locks still overlap, and the fenced resource refuses the stale
	// holder (runFenced); otherwise the run must be safe (runSafe).
	fenced bool
}

var hazards = []hazard{
	{"immediate restart without persistence", scenRestart(restartVariant{}), []mitigation{
		{name: "restart quarantine", fn: scenRestart(restartVariant{quarantine: true})},
		{name: "aof always", fn: scenRestart(restartVariant{keepData: true}), args: aofAlways},
		{name: "restart delayed past ttl", fn: scenRestart(restartVariant{delay: 1100 * time.Millisecond})},
	}},
	{"client pause past validity", scenClientPauseAfter(false), []mitigation{
		{name: "fencing", fn: scenClientPauseAfter(true)},
	}},
	{"client clock 15% slow with drift factor 5%", scenClockDriftFactor(0.85, 0.05), []mitigation{
		{name: "drift factor 25%", fn: scenClockDriftFactor(0.85, 0.25)},
	}},
	{"server clock jump on 3 masters", scenServerClockJump(false), []mitigation{
		{name: "fencing", fn: scenServerClockJump(true), fenced: true},
	}},
	{"eviction under volatile-lru", scenEviction("volatile-lru"), []mitigation{
		{name: "noeviction", fn: scenEviction("noeviction")},
	}},
	{"replica promotion after lost replication", scenReplicaPromotion(false), []mitigation{
		{name: "restart quarantine", fn: scenReplicaPromotion(true)},
	}},
}

// TestHazardsAreDetected runs the faults outside Redlock's model, unmitigated: the
// checker must see the overlap each one causes.
func TestHazardsAreDetected(t *testing.T) {
	for _, hz := range hazards {
		t.Run(hz.name, func(t *testing.T) {
			t.Parallel()
			runHazard(t, hz.fn, 5)
		})
	}
}

// TestHazardsAreMitigated runs each hazard of TestHazardsAreDetected with each of
// its mitigations: safe, or for fencing, the stale holder refused by the resource.
func TestHazardsAreMitigated(t *testing.T) {
	for _, hz := range hazards {
		require.NotEmpty(t, hz.mitigations, "hazard %q has no mitigation", hz.name)
		for _, mt := range hz.mitigations {
			t.Run(hz.name+"/"+mt.name, func(t *testing.T) {
				t.Parallel()
				if mt.fenced {
					runFenced(t, mt.fn, 5, mt.args...)
				} else {
					runSafe(t, mt.fn, 5, mt.args...)
				}
			})
		}
	}
}
