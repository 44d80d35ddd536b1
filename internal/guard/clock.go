//go:build unix

package guard

import (
	"time"

	"golang.org/x/sys/unix"
)

// Deadlines cross the pipe as readings of CLOCK_MONOTONIC, which is one clock for
// every process of the machine and which a step of the wall clock (NTP, an
// administrator) does not move. A time.Time sent as Unix nanoseconds would lose
// its monotonic reading: a wall-clock step between acquisition and the guard's
// arming would then shift the guard's deadline by the size of the step.

// monoNow reads CLOCK_MONOTONIC in nanoseconds.
func monoNow() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic("guard: CLOCK_MONOTONIC unreadable: " + err.Error())
	}
	return ts.Nano()
}

// stamp converts t (with its monotonic reading) to CLOCK_MONOTONIC. The clock is
// read before the time left, so a delay between the two makes the stamp earlier,
// never later.
func stamp(t time.Time) int64 {
	now := monoNow()
	return now + int64(time.Until(t))
}

// unstamp converts a CLOCK_MONOTONIC reading back to a time.Time of this process.
// time.Now is read first, so a delay between the two makes the result earlier,
// never later.
func unstamp(ns int64) time.Time {
	now := time.Now()
	return now.Add(time.Duration(ns - monoNow()))
}
