package bench

import (
	"math"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHistogramFigures(t *testing.T) {
	buckets := []float64{0, 1e-6, 1e-5, 1e-4, 1e-3, math.Inf(1)}
	tests := []struct {
		name            string
		counts          []uint64
		n               int64
		p99, p999, last time.Duration
	}{
		{"empty", []uint64{0, 0, 0, 0, 0}, 0, 0, 0, 0},
		{"all in the first bucket", []uint64{10, 0, 0, 0, 0}, 10, time.Microsecond, time.Microsecond, time.Microsecond},
		{"one in a thousand slow", []uint64{0, 998, 1, 1, 0}, 1000, 10 * time.Microsecond, 100 * time.Microsecond, time.Millisecond},
		{"the open last bucket counts at its lower bound", []uint64{0, 0, 0, 0, 1}, 1, time.Millisecond, time.Millisecond, time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, p99, p999, last := histogramFigures(buckets, tt.counts)
			assert.Equal(t, tt.n, n)
			assert.Equal(t, tt.p99, p99)
			assert.Equal(t, tt.p999, p999)
			assert.Equal(t, tt.last, last)
		})
	}
}

func TestSchedProbeMeasuresThisProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("schedstat is Linux's")
	}
	var p SchedProbe
	p.Start()
	deadline := time.Now().Add(20 * time.Millisecond)
	for time.Now().Before(deadline) { // on a processor for a while
	}
	for range 100 {
		done := make(chan struct{})
		go func() { close(done) }()
		<-done
	}
	s := p.Stop()
	assert.Greater(t, s.CPU, 10*time.Millisecond, "the busy loop's time on a processor")
	assert.Positive(t, s.Slices)
	assert.GreaterOrEqual(t, s.RunDelay, time.Duration(0))
	assert.Positive(t, s.GoWakeups, "the goroutines started")
	assert.Contains(t, s.String(), "threads waited on the run queue")

	_, err := ThreadSched(math.MaxInt32)
	require.Error(t, err, "no such process")
	_, err = ThreadSched(os.Getpid())
	require.NoError(t, err)
}

func TestSchedStatsAdd(t *testing.T) {
	a := SchedStats{GoWakeups: 2, GoP99: time.Millisecond, GoP999: 2 * time.Millisecond, GoMax: 3 * time.Millisecond, CPU: time.Second, RunDelay: 2 * time.Second, Slices: 10}
	b := SchedStats{GoWakeups: 3, GoP99: 2 * time.Millisecond, GoP999: time.Millisecond, GoMax: time.Millisecond, CPU: time.Second, RunDelay: time.Second, Slices: 5}
	assert.Equal(t, SchedStats{GoWakeups: 5, GoP99: 2 * time.Millisecond, GoP999: 2 * time.Millisecond, GoMax: 3 * time.Millisecond,
		CPU: 2 * time.Second, RunDelay: 3 * time.Second, Slices: 15}, a.Add(b))
}
