package quorum

import (
	"errors"
	"fmt"
	"time"

	"github.com/redlock/redlock/internal/defaults"
	"github.com/redlock/redlock/internal/wire"
	"github.com/redlock/redlock/quorum/observe"
)

// defaultKeepAliveFraction is the share of the TTL after which the keep-alive
// extends (the shared defaults are in internal/defaults).
const (
	defaultKeepAliveFraction = 0.5
	// maxOwnerLabel bounds the owner label so the whole value stays within 256 bytes.
	maxOwnerLabel = 64
)

// Clock gives the current time. Elapsed time is measured as the difference of two
// Now readings, so a Clock must be monotonic (time.Now is). Tests inject clocks with
// a rate error to model client clock drift.
type Clock interface {
	Now() time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// config holds every tunable of a Manager.
type config struct {
	prefix      string
	nodeTimeout time.Duration
	driftFactor float64
	driftExtra  time.Duration
	attempts    int
	delay       time.Duration
	jitter      time.Duration
	maxTTL      time.Duration
	// quarantine is the restart quarantine window; 0 turns it off. <0 means "derive
	// from maxTTL" (the default).
	quarantine time.Duration
	owner      string
	clock      Clock
	// observer, when set, receives the locks' events (observer.go).
	observer observe.Observer
	// submitted, when set, is the wire transport's Submitted hook (tests).
	submitted func(i int, cmd *wire.Cmd)
	// delays, when set, makes each acquisition's delay policy in place of
	// retryPolicy (retry.go); fw is the acquisition's fair queue place, or nil.
	delays func(fw *fairWaiter) delayPolicy
}

func defaultConfig() config {
	return config{
		prefix:      defaults.KeyPrefix,
		nodeTimeout: defaults.NodeTimeout,
		driftFactor: defaults.DriftFactor,
		driftExtra:  defaults.DriftExtra,
		attempts:    defaults.RetryAttempts,
		delay:       defaults.RetryDelay,
		jitter:      defaults.RetryJitter,
		maxTTL:      defaults.MaxTTL,
		quarantine:  -1,
		clock:       systemClock{},
	}
}

func (c *config) validate() error {
	var errs []error
	if c.prefix == "" {
		errs = append(errs, errors.New("key prefix must not be empty"))
	}
	if c.nodeTimeout <= 0 {
		errs = append(errs, fmt.Errorf("node timeout %v must be positive", c.nodeTimeout))
	}
	if c.driftFactor < 0 || c.driftFactor >= 0.5 {
		errs = append(errs, fmt.Errorf("drift factor %v outside [0, 0.5)", c.driftFactor))
	}
	if c.driftExtra < 0 {
		errs = append(errs, fmt.Errorf("drift extra %v must not be negative", c.driftExtra))
	}
	if c.attempts < 1 {
		errs = append(errs, fmt.Errorf("retry attempts %d must be at least 1", c.attempts))
	}
	if c.delay <= 0 {
		errs = append(errs, fmt.Errorf("retry delay %v must be positive", c.delay))
	}
	if c.jitter < 0 || c.jitter > c.delay {
		errs = append(errs, fmt.Errorf("retry jitter %v outside [0, delay %v]", c.jitter, c.delay))
	}
	if c.maxTTL <= 0 {
		errs = append(errs, fmt.Errorf("max ttl %v must be positive", c.maxTTL))
	}
	if c.clock == nil {
		errs = append(errs, errors.New("clock must not be nil"))
	}
	if c.quarantine < 0 {
		c.quarantine = c.maxTTL + c.drift(c.maxTTL)
	}
	return errors.Join(errs...)
}

// drift returns the drift budget for ttl: ttl*factor + extra.
func (c *config) drift(ttl time.Duration) time.Duration {
	return time.Duration(float64(ttl)*c.driftFactor) + c.driftExtra
}

// Option configures a Manager. Options are checked by New; a bad value is an error there.
type Option func(*config)

// WithKeyPrefix sets the prefix of every lock key (default "lock:").
func WithKeyPrefix(prefix string) Option { return func(c *config) { c.prefix = prefix } }

// WithNodeTimeout sets the deadline of one command on one master, dialling included
// (default 50ms); a master that leaves a command unanswered this long has its
// connection dropped. Keep it small against the TTL. An acquisition round that a
// quorum granted does not wait this long for the other masters: twice the time the
// quorum took, 5 ms at least; releases and extensions wait for every master, up
// to this deadline.
func WithNodeTimeout(d time.Duration) Option { return func(c *config) { c.nodeTimeout = d } }

// WithDrift sets the clock drift budget: validity = ttl - elapsed - (ttl*factor + extra).
// factor must be in [0, 0.5). Default 0.01 and 2ms.
func WithDrift(factor float64, extra time.Duration) Option {
	return func(c *config) { c.driftFactor, c.driftExtra = factor, extra }
}

// WithRetry sets the policy of the blocking Acquire: at most attempts rounds, with a
// random delay in [delay-jitter, delay+jitter] between them. Default 32, 150ms, 100ms.
func WithRetry(attempts int, delay, jitter time.Duration) Option {
	return func(c *config) { c.attempts, c.delay, c.jitter = attempts, delay, jitter }
}

// WithMaxTTL bounds every TTL asked of Acquire and Extend (default 5m). Unless set
// by WithRestartQuarantine, the quarantine window is maxTTL plus its drift budget.
func WithMaxTTL(d time.Duration) Option { return func(c *config) { c.maxTTL = d } }

// WithRestartQuarantine sets the restart quarantine window: a master whose run_id
// changed, or whose uptime is below the window, does not vote until the window has
// passed. 0 turns the quarantine off, which is safe only for masters that persist
// every write (appendfsync always) or throwaway local ones.
func WithRestartQuarantine(window time.Duration) Option {
	return func(c *config) {
		if window < 0 {
			window = 0
		}
		c.quarantine = window
	}
}

// WithOwner sets the owner label written into lock values (bounded to 64 bytes).
func WithOwner(label string) Option { return func(c *config) { c.owner = label } }

// WithClock replaces the clock used to measure elapsed time and validity. For tests.
func WithClock(clk Clock) Option { return func(c *config) { c.clock = clk } }
