package checker

import (
	"os/exec"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestThreadSamplerSharedByRecorders: two recorders probing at once get the
// same threads' run-queue waits from one sampler, each on its own time base, and
// the sampler stops once the last of them stopped. Busy processes beside the test
// (one more than the processors) make this process's threads wait on the run
// queues.
func TestThreadSamplerSharedByRecorders(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("run-queue waits are read from Linux's schedstat")
	}
	r1, r2 := New(1), New(2)
	r2.base = r1.base.Add(-time.Second)
	stop1 := r1.ProbeScheduling()
	stop2 := r2.ProbeScheduling()
	threadSampling.mu.Lock()
	running, gen := threadSampling.stop != nil, threadSampling.gen
	threadSampling.mu.Unlock()
	require.True(t, running)
	var busy []*exec.Cmd
	for range runtime.NumCPU() + 1 {
		c := exec.Command("sh", "-c", "while :; do :; done")
		require.NoError(t, c.Start())
		busy = append(busy, c)
	}
	waits := func(r *Recorder) int {
		r.mu.Lock()
		defer r.mu.Unlock()
		return len(r.threadWaits)
	}
	deadline := time.Now().Add(5 * time.Second)
	for (waits(r1) == 0 || waits(r2) == 0) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	for _, c := range busy {
		_ = c.Process.Kill()
		_ = c.Wait()
	}
	stop1()
	threadSampling.mu.Lock()
	assert.NotNil(t, threadSampling.stop, "r2 still probes: the sampler runs on")
	assert.Equal(t, gen, threadSampling.gen, "one sampler for both")
	threadSampling.mu.Unlock()
	stop2()
	threadSampling.mu.Lock()
	assert.Nil(t, threadSampling.stop, "stopped with the last recorder")
	threadSampling.mu.Unlock()

	require.Positive(t, waits(r1), "r1 got the waits")
	require.Positive(t, waits(r2), "r2 got the waits")
	r1.mu.Lock()
	w1 := r1.threadWaits[len(r1.threadWaits)-1] // after r2 subscribed
	r1.mu.Unlock()
	r2.mu.Lock()
	defer r2.mu.Unlock()
	for _, w2 := range r2.threadWaits {
		if w2.tid == w1.tid && w2.d == w1.d {
			assert.InDelta(t, w1.at+1000, w2.at, 0.001, "the same wait on r2's time base")
			return
		}
	}
	t.Errorf("r1's last wait %+v is not among r2's", w1)
}
