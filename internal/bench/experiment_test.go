package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSummarize checks the aggregation on a hand-made history.
func TestSummarize(t *testing.T) {
	ms := int64(time.Millisecond)
	results := []WorkerResult{
		{ID: "p1", Waits: []int64{1 * ms, 3 * ms}, Acquired: []int64{1 * ms, 5 * ms}, Released: []int64{2 * ms, 6 * ms}, Started: 0, Finished: 6 * ms},
		{ID: "p2", Waits: []int64{4 * ms, 8 * ms}, Acquired: []int64{3 * ms, 8 * ms}, Released: []int64{4 * ms, 9 * ms}, Started: 0, Finished: 10 * ms, Failures: 1},
	}
	s := Summarize("t", 2, results)
	assert.Equal(t, 4, s.Total)
	assert.Equal(t, 10*time.Millisecond, s.Duration)
	assert.Equal(t, 4*time.Millisecond, s.MeanWait)
	assert.Equal(t, 3*time.Millisecond, s.P50Wait)
	assert.Equal(t, 8*time.Millisecond, s.MaxWait)
	assert.InDelta(t, 400, s.PerSecond, 0.001)
	// Handoffs: release 2 -> acquire 3 (1ms), release 4 -> 5 (1ms), release 6 -> 8 (2ms).
	assert.Equal(t, 4*time.Millisecond/3, s.HandoffMean)
	assert.Equal(t, 2*time.Millisecond, s.HandoffP99)
	require.Len(t, s.Processes, 2)
	assert.InDelta(t, 0.5, s.Processes[0].Share, 0.001)
	assert.Equal(t, 1, s.Processes[1].Failures)
	// p1 finished at 6ms, when p2 had done 1 of 2: 50%; p2 finished last: 100%.
	assert.InDelta(t, 0.5, s.Processes[0].OthersAtFinish, 0.001)
	assert.InDelta(t, 1, s.Processes[1].OthersAtFinish, 0.001)
	assert.InDelta(t, 0.5, s.MinOthersAtFinish, 0.001)
}
