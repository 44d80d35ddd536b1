package cli

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"
	"unsafe"
)

// clockThreadCPUTime is Linux's CLOCK_THREAD_CPUTIME_ID: the calling thread's
// processor time, to the nanosecond (getrusage's lags by up to a scheduler tick).
const clockThreadCPUTime = 3

// threadCPU returns the processor time the calling thread has used.
func threadCPU() (time.Duration, bool) {
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}

// threadWaited returns the time the calling thread has spent runnable, waiting
// for a core (the second field of /proc/thread-self/schedstat).
func threadWaited() (time.Duration, bool) {
	b, err := os.ReadFile("/proc/thread-self/schedstat")
	if err != nil {
		return 0, false
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0, false
	}
	w, err := strconv.ParseInt(string(f[1]), 10, 64)
	return time.Duration(w), err == nil
}
