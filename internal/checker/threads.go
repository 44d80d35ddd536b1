package checker

import (
	"os"
	"sync"
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

// threadSampling is the process's one sampler of its threads' run-queue waits,
// shared by every Recorder whose probe runs (subscribeThreads): they all watch
// the same process, and a read costs one read of a file per thread (a hundred
// threads: 0.3 ms, 0.7 ms under the race detector; schedstat.Sampler), every
// lagProbeEvery. A sampler per Recorder that listed and opened every file anew
// each time (schedstat.Threads, 4.5 ms under the race detector) took a processor
// of a 2-core machine from the tests late in a run of the quorum package, when
// the process had gathered a hundred threads: its rounds then missed their node
// timeouts on every master.
var threadSampling struct {
	mu   sync.Mutex
	subs map[*Recorder]struct{}
	gen  int    // the running sampler's generation
	stop func() // stops the running sampler and waits for it; nil when none runs
}

// subscribeThreads has r receive the threads' run-queue waits, starting the
// process's sampler if none runs (Linux only: elsewhere nothing is sampled). Its
// result unsubscribes r, and stops the sampler and waits for it when r was the
// last.
func subscribeThreads(r *Recorder) (unsubscribe func()) {
	ts := &threadSampling
	ts.mu.Lock()
	if ts.subs == nil {
		ts.subs = map[*Recorder]struct{}{}
	}
	ts.subs[r] = struct{}{}
	if ts.stop == nil {
		ts.gen++
		gen := ts.gen
		quit, done := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			sampleThreads(quit, gen)
		}()
		ts.stop = func() { close(quit); <-done }
	}
	ts.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			ts.mu.Lock()
			delete(ts.subs, r)
			var stop func()
			if len(ts.subs) == 0 {
				stop, ts.stop = ts.stop, nil
			}
			ts.mu.Unlock()
			if stop != nil {
				stop()
			}
		})
	}
}

// sampleThreads reads the run-queue waits of this process's threads every
// lagProbeEvery until quit closes, and hands them to the subscribed Recorders
// while it is the running sampler (generation gen). The Go runtime runs a
// processor's timers and goroutines on the thread that holds it: when the machine
// leaves that thread waiting on a run queue, the timers due there (a lock's
// expiry) and the goroutines queued there (the one that sees Done) wait with it,
// while the scheduling probe, on another thread, fires on time. threadStall reads
// what these samples measured.
func sampleThreads(quit <-chan struct{}, gen int) {
	s, err := schedstat.NewSampler(os.Getpid())
	if err != nil {
		return
	}
	defer s.Close()
	prev, err := s.Read(nil)
	if err != nil {
		return
	}
	var spare map[int]schedstat.Thread
	prevAt := time.Now()
	t := time.NewTicker(lagProbeEvery)
	defer t.Stop()
	for {
		select {
		case <-quit:
			return
		case <-t.C:
		}
		now, err := s.Read(spare)
		if err != nil {
			return
		}
		at := time.Now()
		var waits []threadWait
		for tid, th := range now {
			if d := th.RunDelay - prev[tid].RunDelay; d >= minThreadWait && prev[tid].Slices > 0 {
				waits = append(waits, threadWait{tid: tid, d: d})
			}
		}
		if len(waits) > 0 {
			ts := &threadSampling
			ts.mu.Lock()
			if ts.gen == gen {
				for r := range ts.subs {
					r.threadWaited(prevAt, at, waits)
				}
			}
			ts.mu.Unlock()
		}
		prev, spare, prevAt = now, prev, at
	}
}

// threadWaited records waits read at at that ended in (prev, at].
func (r *Recorder) threadWaited(prev, at time.Time, waits []threadWait) {
	p, a := r.ms(prev), r.ms(at)
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, w := range waits {
		w.prev, w.at = p, a
		r.threadWaits = append(r.threadWaits, w)
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
