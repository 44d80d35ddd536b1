// Package schedstat reads how long the threads of a process have run and waited
// on the kernel's run queues (/proc/PID/task/*/schedstat, Linux only). A thread
// that waits on a run queue is ready to run and does not: the machine's share of
// a delay, told apart from the program's.
package schedstat

import (
	"errors"
	"time"
)

// Thread is one thread's figures since it started.
type Thread struct {
	CPU      time.Duration // time on a processor
	RunDelay time.Duration // time on a run queue, ready to run
	Slices   int64         // times on a processor
}

// ErrUnavailable is returned where the figures cannot be read: off Linux, or
// for a process that is gone.
var ErrUnavailable = errors.New("schedstat unavailable")

// Threads reads the figures of every thread of process pid, by thread id, once:
// it opens, reads and closes a file per thread (a Sampler keeps them open for
// reads again and again). A thread that exits during the read is left out.
func Threads(pid int) (map[int]Thread, error) {
	s, err := NewSampler(pid)
	if err != nil {
		return nil, err
	}
	defer func() { _ = s.Close() }()
	return s.Read(nil)
}
