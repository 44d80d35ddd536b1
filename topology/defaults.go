package topology

import "github.com/redlock/redlock/internal/defaults"

// Defaults of the topology file. They are the library's own defaults (the
// values are written once, in internal/defaults), so a file that leaves a setting
// out gets the library's behaviour.
const (
	DefaultKeyPrefix         = defaults.KeyPrefix
	DefaultTTL               = defaults.TTL
	DefaultMaxTTL            = defaults.MaxTTL
	DefaultNodeTimeout       = defaults.NodeTimeout
	DefaultDriftFactor       = defaults.DriftFactor
	DefaultDriftExtra        = defaults.DriftExtra
	DefaultRetryAttempts     = defaults.RetryAttempts
	DefaultRetryDelay        = defaults.RetryDelay
	DefaultRetryJitter       = defaults.RetryJitter
	DefaultRestartQuarantine = defaults.RestartQuarantine
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
