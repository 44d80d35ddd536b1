// Package schedstat reads how long the threads of a process have run and waited
// on the kernel's run queues (/proc/PID/task/*/schedstat, Linux only). A thread
// that waits on a run queue is ready to run and does not: the machine's share of
// a delay, told apart from the program's.
package schedstat

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

// Threads reads the figures of every thread of process pid, by thread id. A
// thread that exits during the read is left out.
func Threads(pid int) (map[int]Thread, error) {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "task")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: process %d: %w", ErrUnavailable, pid, err)
	}
	out := make(map[int]Thread, len(entries))
	for _, e := range entries {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name(), "schedstat"))
		if err != nil {
			continue // the thread exited
		}
		if th, ok := parse(string(data)); ok {
			out[tid] = th
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: process %d has no readable schedstat", ErrUnavailable, pid)
	}
	return out, nil
}

// parse reads one schedstat line: time on a processor (ns), time waiting on a
// run queue (ns), slices.
func parse(line string) (Thread, bool) {
	f := strings.Fields(line)
	if len(f) < 3 {
		return Thread{}, false
	}
	cpu, err1 := strconv.ParseInt(f[0], 10, 64)
	delay, err2 := strconv.ParseInt(f[1], 10, 64)
	slices, err3 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return Thread{}, false
	}
	return Thread{CPU: time.Duration(cpu), RunDelay: time.Duration(delay), Slices: slices}, true
}
