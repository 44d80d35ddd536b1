// Package topology is the declared lock cluster as plain Go data: the masters, the
// lock timing (TTL, drift budget, node timeout), the retry policy, the desired server
// settings and the per-lock policies, with the rules that make a cluster valid.
//
// It imports the standard library only. Decoding from HCL lives in package hcl;
// talking to Redis lives elsewhere. Every default is a constant in defaults.go.
package topology

import (
	"path"
	"slices"
	"time"
)

// Cluster is one declared lock cluster. The zero value is not useful: build one
// with the hcl decoder or fill every field and call Validate.
type Cluster struct {
	// Name is the label of the cluster block.
	Name string
	// KeyPrefix is prepended to every lock name to form the Redis key. Never empty.
	KeyPrefix string
	// TTL is the default lock validity time.
	TTL time.Duration
	// MaxTTL bounds every requested TTL and is the base of the restart quarantine window.
	MaxTTL time.Duration
	// NodeTimeout is the deadline for one command on one master, dialling included.
	NodeTimeout time.Duration
	// RestartQuarantine keeps a restarted or young master from voting until
	// QuarantineWindow has passed. Off only for throwaway local masters.
	RestartQuarantine bool
	// Drift is the clock drift budget.
	Drift Drift
	// Retry is the blocking-acquire retry policy.
	Retry Retry
	// Settings are the desired server settings in declaration order, named as Redis
	// CONFIG names them ("maxmemory-policy"; the file writes "maxmemory_policy").
	Settings []Setting
	// Masters are the independent Redis masters, in declared order.
	Masters []Master
	// Locks are the per-name policies; the first whose Match matches a name wins.
	Locks []Policy
	// Ignores acknowledge findings an operator has decided to live with.
	Ignores []Ignore
}

// Ignore acknowledges a finding code, with a reason, on some masters (all when
// Masters is empty). An acknowledged finding is still shown, marked as such, and
// does not count as a warning; errors cannot be acknowledged.
type Ignore struct {
	Code    string
	Reason  string
	Masters []string
}

// Acknowledged returns the ignore that covers finding code on master, or nil.
func (c *Cluster) Acknowledged(code, master string) *Ignore {
	for i := range c.Ignores {
		ig := &c.Ignores[i]
		if ig.Code != code {
			continue
		}
		if len(ig.Masters) == 0 || slices.Contains(ig.Masters, master) {
			return ig
		}
	}
	return nil
}

// Drift is the clock drift budget: for a TTL the budget is TTL*Factor + Extra.
type Drift struct {
	Factor float64
	Extra  time.Duration
}

// Budget returns the drift budget for ttl: ttl*Factor + Extra.
func (d Drift) Budget(ttl time.Duration) time.Duration {
	return time.Duration(float64(ttl)*d.Factor) + d.Extra
}

// Retry is the policy of a blocking acquire: at most Attempts rounds, separated by
// a random delay in [Delay-Jitter, Delay+Jitter].
type Retry struct {
	Attempts int
	Delay    time.Duration
	Jitter   time.Duration
}

// Setting is one desired server setting. Name uses the Redis CONFIG spelling
// ("maxmemory-policy"); Value is compared as a string.
type Setting struct {
	Name  string
	Value string
}

// Master is one independent Redis master.
type Master struct {
	// Name is the block label; errors and output name masters by it.
	Name string
	// Address is host:port.
	Address  string
	Username string
	// Password is secret: it never reaches output, whether it came from a sensitive
	// variable or was written in the file.
	Password string
	DB       int
	// TLS is nil when the connection is plain TCP.
	TLS *TLS
}

// TLS holds the TLS settings of one master. Paths are as written in the file,
// resolved against the file's directory by the decoder.
type TLS struct {
	CAFile             string
	CertFile           string
	KeyFile            string
	ServerName         string
	InsecureSkipVerify bool
}

// Policy is a per-lock-name policy. Zero fields mean "use the cluster default".
type Policy struct {
	// Match is a glob in path.Match syntax ("billing/*").
	Match string
	// TTL overrides Cluster.TTL for matching names when non-zero.
	TTL time.Duration
	// MaxExtensions caps keep-alive extensions; 0 means unlimited within max hold.
	MaxExtensions int
	// Fair makes waiters queue in FIFO order.
	Fair bool
	// Fencing hands out a strictly increasing fence number per acquisition.
	Fencing bool
	// Permits makes matching names semaphores of that many holders (acquire and
	// run without -permits); 0 means a plain lock. At most MaxPermits.
	Permits int
}

// MaxPermits bounds a lock policy's permits (the quorum package's MaxPermits).
const MaxPermits = 1024

// Quorum returns the number of votes a lock needs: N/2+1.
func (c *Cluster) Quorum() int { return len(c.Masters)/2 + 1 }

// DriftBudget returns the drift budget for ttl.
func (c *Cluster) DriftBudget(ttl time.Duration) time.Duration { return c.Drift.Budget(ttl) }

// QuarantineWindow returns how long a restarted master stays out of the quorum:
// MaxTTL plus the drift budget of MaxTTL. It is zero when quarantine is off.
func (c *Cluster) QuarantineWindow() time.Duration {
	if !c.RestartQuarantine {
		return 0
	}
	return c.MaxTTL + c.Drift.Budget(c.MaxTTL)
}

// PolicyFor returns the policy for a lock name: the first Locks entry whose glob
// matches, with zero fields filled from the cluster defaults. When nothing matches
// it returns the cluster defaults with Match empty.
func (c *Cluster) PolicyFor(name string) Policy {
	p := Policy{}
	for _, l := range c.Locks {
		if ok, err := path.Match(l.Match, name); err == nil && ok {
			p = l
			break
		}
	}
	if p.TTL == 0 {
		p.TTL = c.TTL
	}
	return p
}

// Master returns the master with the given name, or nil.
func (c *Cluster) Master(name string) *Master {
	for i := range c.Masters {
		if c.Masters[i].Name == name {
			return &c.Masters[i]
		}
	}
	return nil
}

// Setting returns the desired value of a server setting and whether it is declared.
func (c *Cluster) Setting(name string) (string, bool) {
	for _, s := range c.Settings {
		if s.Name == name {
			return s.Value, true
		}
	}
	return "", false
}
