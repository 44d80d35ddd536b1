package bench

import (
	"os"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	experiment "github.com/redlock/redlock/internal/bench"
)

// TestMachineStalls runs the wait report's idle probe alone, with nothing else of
// the benchmarks running, for REDLOCK_BENCH_STALLS (a duration, e.g. 12s: as long
// as a fair run of 5 x 5,000): how late the machine itself wakes a process that
// sleeps 1 ms, again and again. A FIFO queue's handoffs run one after the other,
// so one stall of the machine adds to every wait it falls in: the fair row's
// maximum wait cannot be shorter than its mean plus the machine's longest stall.
func TestMachineStalls(t *testing.T) {
	d, err := time.ParseDuration(os.Getenv("REDLOCK_BENCH_STALLS"))
	if err != nil || d <= 0 {
		t.Skip("set REDLOCK_BENCH_STALLS=12s to measure the machine's own stalls")
	}
	p := startProbe()
	time.Sleep(d)
	p.finish()
	require.Positive(t, p.sleeps)
	lates := make([]time.Duration, 0, len(p.stalls))
	for _, s := range p.stalls {
		lates = append(lates, experiment.Round(s.late))
	}
	slices.Sort(lates)
	slices.Reverse(lates)
	t.Logf("%v of 1 ms sleeps, alone: %d sleeps, %d woken over 2 ms late, the longest %v; the CPUs %v", d, p.sleeps, len(lates), lates[:min(len(lates), 8)], p.cpu)
}
