package redistest

import (
	"time"

	"go.uber.org/goleak"
)

// leakWait bounds how long FindLeaks waits for goroutines that end on their own
// after a Close: go-redis's pool probes a dead master's address in a goroutine that
// sleeps one second between dials and only notices the Close when it wakes
// (internal/pool.(*ConnPool).tryDial).
const leakWait = 5 * time.Second

// FindLeaks is goleak.Find retried until no unexpected goroutine is left or
// leakWait has passed: a goroutine that outlives its Close by more than that is
// reported as a leak; one that is merely on its way out is not.
func FindLeaks(opts ...goleak.Option) error {
	deadline := time.Now().Add(leakWait)
	for {
		err := goleak.Find(opts...)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(250 * time.Millisecond)
	}
}
