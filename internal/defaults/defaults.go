// Package defaults holds the defaults that the library (quorum) and the topology
// file (topology) share, written once: a file that leaves a setting out gets the
// library's behaviour because both read these values.
package defaults

import "time"

// The shared defaults. Each one is documented where it is used: the quorum
// options that take it and the topology attribute that sets it.
const (
	KeyPrefix         = "lock:"
	TTL               = 30 * time.Second
	MaxTTL            = 5 * time.Minute
	NodeTimeout       = 50 * time.Millisecond
	DriftFactor       = 0.01
	DriftExtra        = 2 * time.Millisecond
	RetryAttempts     = 32
	RetryDelay        = 150 * time.Millisecond
	RetryJitter       = 100 * time.Millisecond
	RestartQuarantine = true
)
