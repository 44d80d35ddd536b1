package checker

import (
	"os"
	"time"

	"github.com/redlock/redlock/internal/schedstat"
)

// threadWait is one thread's wait on the kernel's run queue, as read between two
// samples: d of waiting that ended in (prev, at] ms.
type threadWait struct {
	tid      int
	prev, at float64
	d        time.Duration
}

// minThreadWait: shorter waits between two samples are not kept.
const minThreadWait = 100 * time.Microsecond

// sampleThreads reads the run-queue waits of this process's threads every
// lagProbeEvery until quit closes (Linux only: elsewhere it returns at once).
// The Go runtime runs a processor's timers and goroutines on the thread that
// holds it: when the machine leaves that thread waiting on a run queue, the
// timers due there (a lock's expiry) and the goroutines queued there (the one
// that sees Done) wait with it, while the scheduling probe, on another thread,
// fires on time. threadStall reads what these samples measured.
func (r *Recorder) sampleThreads(quit <-chan struct{}) {
	pid := os.Getpid()
	prev, err := schedstat.Threads(pid)
	if err != nil {
		return
	}
	prevAt := r.ms(time.Now())
	t := time.NewTicker(lagProbeEvery)
	defer t.Stop()
	for {
		select {
		case <-quit:
			return
		case <-t.C:
		}
		now, err := schedstat.Threads(pid)
		if err != nil {
			return
		}
		at := r.ms(time.Now())
		var waits []threadWait
		for tid, th := range now {
			if d := th.RunDelay - prev[tid].RunDelay; d >= minThreadWait && prev[tid].Slices > 0 {
				waits = append(waits, threadWait{tid: tid, prev: prevAt, at: at, d: d})
			}
		}
		if len(waits) > 0 {
			r.mu.Lock()
			r.threadWaits = append(r.threadWaits, waits...)
			r.mu.Unlock()
		}
		prev, prevAt = now, at
	}
}

// threadStall returns the longest time one thread of this process waited on a
// run queue within the window [from, to] ms, its waits in the window added up.
// A wait read at a sample is known to have ended between the previous sample and
// that one: it is placed where it overlaps the window most (ending at to, or as
// near to it as the samples allow), so the figure is at most one sample period
// more than the truth, never less. r.mu is held.
func (r *Recorder) threadStall(from, to float64) time.Duration {
	per := map[int]float64{}
	for _, w := range r.threadWaits {
		end := min(max(to, w.prev), w.at)
		d := float64(w.d) / float64(time.Millisecond)
		if o := min(end, to) - max(end-d, from); o > 0 {
			per[w.tid] += o
		}
	}
	var top float64
	for _, v := range per {
		top = max(top, v)
	}
	return time.Duration(top * float64(time.Millisecond))
}
