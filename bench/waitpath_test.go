package bench

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	experiment "github.com/redlock/redlock/internal/bench"
	"github.com/redlock/redlock/quorum"
	"github.com/redlock/redlock/quorum/observe"
)

// What sets the maximum wait. Each worker records, per call of its Acquirer, which
// path the call took (rounds, masters that failed in them, garbage collections of
// the worker that ended meanwhile), and the benchmark's own process, idle while the
// workers run, measures how late its own 1 ms sleeps wake up (the machine's
// scheduling stalls). The longest waits are then set beside what happened during
// them, so that a stall of the machine is told apart from a lost wake-up (a retry
// delay: 50-250 ms, several rounds), a master timing out, or a garbage collection.

// envPaths names the directory where each worker writes the paths of its calls.
const envPaths = "REDLOCK_BENCH_PATHS"

// acqPath is one call of a worker's Acquirer.
type acqPath struct {
	Start  int64 `json:"s"` // Unix ns
	End    int64 `json:"e"`
	Rounds int   `json:"r,omitempty"` // rounds made (quorum only)
	Errors int   `json:"x,omitempty"` // master answers that were failures (quorum only)
	GCs    int   `json:"g,omitempty"` // garbage collections of the worker that ended during it
	// Last holds the masters' latencies in µs of the call's last acquisition
	// round, in the order the round reported them (quorum only): a long gap's
	// winning round, taken apart.
	Last []int32 `json:"l,omitempty"`
	// Released is when the release of the lock the call took returned (Unix ns):
	// the first part of the gap to the next acquisition.
	Released int64 `json:"d,omitempty"`
}

// pathRecorder counts the rounds and master failures of the call in progress; it
// is the worker Manager's Observer.
type pathRecorder struct {
	rounds, errors atomic.Int64
	masters        int // masters per round
	mu             sync.Mutex
	last           []int32   // the latest acquisition round's latencies so far, µs
	paths          []acqPath // appended by the worker's one goroutine
}

// Observe implements observe.Observer.
func (p *pathRecorder) Observe(e observe.Event) {
	switch {
	case e.Kind == observe.EventAcquire:
		p.rounds.Add(int64(e.Rounds))
	case e.Kind == observe.EventMasterRound:
		if e.Outcome == quorum.OutcomeError.String() {
			p.errors.Add(1)
		}
		if e.Op == "acquire" && p.masters > 0 {
			p.mu.Lock()
			if len(p.last) == p.masters {
				p.last = p.last[:0]
			}
			p.last = append(p.last, int32(e.Latency/time.Microsecond))
			p.mu.Unlock()
		}
	}
}

// gcCycles reads the number of completed garbage collections of this process.
func gcCycles() int {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int(s[0].Value.Uint64())
}

// wrap returns acquire recording the path of each call.
func (p *pathRecorder) wrap(acquire experiment.Acquirer) experiment.Acquirer {
	return func(ctx context.Context) (func(), error) {
		p.rounds.Store(0)
		p.errors.Store(0)
		gc := gcCycles()
		r := acqPath{Start: time.Now().UnixNano()}
		rel, err := acquire(ctx)
		r.End = time.Now().UnixNano()
		r.Rounds, r.Errors, r.GCs = int(p.rounds.Load()), int(p.errors.Load()), gcCycles()-gc
		p.mu.Lock()
		if len(p.last) == p.masters {
			r.Last = slices.Clone(p.last)
		}
		p.last = p.last[:0]
		p.mu.Unlock()
		p.paths = append(p.paths, r)
		if err != nil {
			return rel, err
		}
		i := len(p.paths) - 1
		return func() {
			rel()
			p.paths[i].Released = time.Now().UnixNano()
		}, nil
	}
}

// save writes the recorded paths of worker id where envPaths says, if it does.
func (p *pathRecorder) save(id string) error {
	dir := os.Getenv(envPaths)
	if dir == "" {
		return nil
	}
	data, err := json.Marshal(p.paths)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, id+".json"), data, 0o600)
}
