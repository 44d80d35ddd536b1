package topology

import "time"

// Defaults of the topology file, all in one place. They are the same values as the
// quorum package's defaults, so a file that leaves a setting out gets the library's
// behaviour.
const (
	DefaultKeyPrefix         = "lock:"
	DefaultTTL               = 30 * time.Second
	DefaultMaxTTL            = 5 * time.Minute
	DefaultNodeTimeout       = 50 * time.Millisecond
	DefaultDriftFactor       = 0.01
	DefaultDriftExtra        = 2 * time.Millisecond
	DefaultRetryAttempts     = 32
	DefaultRetryDelay        = 150 * time.Millisecond
	DefaultRetryJitter       = 100 * time.Millisecond
	DefaultRestartQuarantine = true
)

// MaxDriftFactor is the exclusive upper bound of Drift.Factor: a budget of half the
// TTL or more leaves no useful validity.
const MaxDriftFactor = 0.5

// NewCluster returns a cluster named name with every default filled in and no
// masters, locks or settings. Callers add masters before calling Validate.
func NewCluster(name string) *Cluster {
	return &Cluster{
		Name:              name,
		KeyPrefix:         DefaultKeyPrefix,
		TTL:               DefaultTTL,
		MaxTTL:            DefaultMaxTTL,
		NodeTimeout:       DefaultNodeTimeout,
		RestartQuarantine: DefaultRestartQuarantine,
		Drift:             Drift{Factor: DefaultDriftFactor, Extra: DefaultDriftExtra},
		Retry:             Retry{Attempts: DefaultRetryAttempts, Delay: DefaultRetryDelay, Jitter: DefaultRetryJitter},
	}
}
