package faults

import (
	"sync"
	"time"
)

// DriftClock is a client clock that runs at Rate times real time from its start
// (Rate 0.99 runs 1% slow: the client thinks less time passed than did). It is
// monotonic when Rate > 0 and implements quorum.Clock.
type DriftClock struct {
	mu   sync.Mutex
	base time.Time
	at   time.Time // clock reading at base
	rate float64
}

// NewDriftClock returns a clock that starts at the real time now and runs at rate.
func NewDriftClock(rate float64) *DriftClock {
	now := time.Now()
	return &DriftClock{base: now, at: now, rate: rate}
}

// Now returns the drifting time.
func (c *DriftClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at.Add(time.Duration(float64(time.Since(c.base)) * c.rate))
}

// SetRate changes the rate from now on, keeping the clock continuous.
func (c *DriftClock) SetRate(rate float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	c.at = c.at.Add(time.Duration(float64(now.Sub(c.base)) * c.rate))
	c.base, c.rate = now, rate
}

// Real converts a reading of this clock (such as a lock's Until) to the real time
// at which the clock shows it, under the current rate.
func (c *DriftClock) Real(t time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.base.Add(time.Duration(float64(t.Sub(c.at)) / c.rate))
}
