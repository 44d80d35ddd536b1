package quorum

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/redlock/redlock/internal/keyspace"
)

// Sentinel errors. Match them with errors.Is; the concrete errors (*RoundError,
// *NodeError) carry the details.
var (
	// ErrNotAcquired: the lock was not taken. Every failed Acquire/TryAcquire matches it,
	// together with one of ErrHeld, ErrUnavailable, ErrTooSlow or the context's error.
	ErrNotAcquired = errors.New("lock not acquired")
	// ErrHeld: at least one master answered that another owner holds the key.
	ErrHeld = errors.New("held by another owner")
	// ErrUnavailable: fewer than a quorum of masters could vote (down, timed out,
	// erroring or quarantined).
	ErrUnavailable = errors.New("quorum of masters unavailable")
	// ErrTooSlow: a quorum voted, but the round took longer than the TTL minus the
	// drift budget, so no validity was left.
	ErrTooSlow = errors.New("no validity left after the round")
	// ErrLost: a lock we held is no longer ours on a majority, or its validity ran out.
	ErrLost = errors.New("lock lost")
	// ErrReleased: the operation came after Release.
	ErrReleased = errors.New("lock released")
	// ErrInvalidArgument: an argument refused before any I/O: a TTL under 1ms, not
	// whole milliseconds or above the maximum; options a primitive does not take
	// (WithFencing or WithFair on a shared or multi-name hold, ...); a permit
	// count out of range; a leader's value too long. The message says which.
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrInvalidName: an empty lock name or one that collides with a reserved key suffix.
	ErrInvalidName = keyspace.ErrInvalidName
	// ErrQuarantined: a master restarted (or is younger than the quarantine window) and
	// may not vote yet.
	ErrQuarantined = errors.New("master in restart quarantine")
	// ErrWrongType: the key holds a non-string value (a Redisson hash, say); a per-node
	// error, never a vote and never "taken".
	ErrWrongType = errors.New("key holds a value of the wrong type")
	// ErrExtensionCap: keep-alive stopped because the extension cap or maximum hold was reached.
	ErrExtensionCap = errors.New("extension cap reached")
	// ErrSuperseded: a Leadership.Proclaim refused because a later Proclaim of the
	// same leadership reached the masters first; the later value stands and the
	// leadership itself is not affected.
	ErrSuperseded = errors.New("superseded by a later proclamation")
	// ErrRevoked: an administrator revoked the lock (force-expire): a quorum of the masters that answered no
	// longer holds its value, and some hold its tombstone instead. It comes together with ErrLost. The name
	// stays taken until the lock's validity has surely ended, or until its Release deletes the tombstone.
	ErrRevoked = errors.New("revoked by an administrator (force-expire)")
)

// NodeError is a failure on one master. Node is the master's topology name.
type NodeError struct {
	Node string
	Op   string // "acquire", "extend", "release", "force-expire", "inspect", "connect"
	Err  error
}

// Error names the master and the operation.
func (e *NodeError) Error() string { return fmt.Sprintf("master %s: %s: %v", e.Node, e.Op, e.Err) }

// Unwrap returns the underlying error.
func (e *NodeError) Unwrap() error { return e.Err }

// Outcome is what one master did with one command.
type Outcome int

// Outcomes of one command on one master.
const (
	// OutcomeOK: the command took effect for us (SET applied, extended, deleted).
	OutcomeOK Outcome = iota
	// OutcomeMissing: the key was not there (release, extend).
	OutcomeMissing
	// OutcomeForeign: the key holds another owner's value.
	OutcomeForeign
	// OutcomeError: the master failed or timed out; Err says why.
	OutcomeError
	// OutcomeQuarantined: the master answered but may not vote yet.
	OutcomeQuarantined
)

var outcomeNames = [...]string{"ok", "missing", "foreign", "error", "quarantined"}

// String returns the outcome's name.
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return fmt.Sprintf("outcome(%d)", int(o))
}

// MarshalText encodes the outcome as its name.
func (o Outcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// NodeResult is the result of one command on one master.
type NodeResult struct {
	Node    string        `json:"master"`
	Outcome Outcome       `json:"outcome"`
	Err     error         `json:"-"`
	Latency time.Duration `json:"latency_ns"`
	// holder is the value found on the master when Outcome is OutcomeForeign and
	// the command could read it (SET NX GET); "" when unknown. Another owner's
	// token: never printed.
	holder string
}

// Report describes one round over all masters: per-master results in declared
// order, the votes (OutcomeOK results that count) and the quorum needed.
type Report struct {
	Op       string        `json:"op"`
	Key      string        `json:"key"`
	Nodes    []NodeResult  `json:"masters"`
	Votes    int           `json:"votes"`
	Quorum   int           `json:"quorum"`
	Elapsed  time.Duration `json:"elapsed_ns"`
	Validity time.Duration `json:"validity_ns"`
	// start is the clock's reading before the round's first command was sent.
	start time.Time
}

func (r *Report) count(o Outcome) int {
	n := 0
	for _, x := range r.Nodes {
		if x.Outcome == o {
			n++
		}
	}
	return n
}

// nodeErrors returns the per-node errors, each a *NodeError naming the master.
func (r *Report) nodeErrors() []error {
	var errs []error
	for _, x := range r.Nodes {
		if x.Err != nil {
			errs = append(errs, &NodeError{Node: x.Node, Op: r.Op, Err: x.Err})
		}
	}
	return errs
}

// RoundError is a failed round: not enough votes, or no validity left. It matches
// its Kind sentinel (and ErrNotAcquired for acquisitions), the context's error when
// the caller's context ended, and every per-node error.
type RoundError struct {
	Report
	// Kind is ErrHeld, ErrUnavailable, ErrTooSlow or ErrLost.
	Kind error
	// Cause is the caller's context error, when the context ended.
	Cause error
}

// Error says how many votes were gathered of the quorum and names the failing masters.
func (e *RoundError) Error() string {
	var b strings.Builder
	if len(e.Nodes) == 0 { // the deadline or a cancel came before any master was asked
		fmt.Fprintf(&b, "%s %s: %v: no master was asked (a quorum needs %d)", e.Op, e.Key, e.Kind, e.Quorum)
	} else {
		fmt.Fprintf(&b, "%s %s: %v: %d of %d votes (quorum %d)", e.Op, e.Key, e.Kind, e.Votes, len(e.Nodes), e.Quorum)
	}
	if e.Cause != nil {
		fmt.Fprintf(&b, ": %v", e.Cause)
	}
	var held, failed []string
	for _, n := range e.Nodes {
		switch n.Outcome {
		case OutcomeForeign:
			held = append(held, n.Node)
		case OutcomeError, OutcomeQuarantined:
			failed = append(failed, fmt.Sprintf("%s (%v)", n.Node, n.Err))
		}
	}
	sort.Strings(held)
	if len(held) > 0 {
		fmt.Fprintf(&b, "; held elsewhere on %s", strings.Join(held, ", "))
	}
	if len(failed) > 0 {
		fmt.Fprintf(&b, "; failed on %s", strings.Join(failed, "; "))
	}
	return b.String()
}

// Unwrap exposes the sentinel, ErrNotAcquired for acquisitions, the context cause and
// the per-node errors to errors.Is and errors.As.
func (e *RoundError) Unwrap() []error {
	errs := []error{e.Kind}
	if e.Op == opAcquire {
		errs = append(errs, ErrNotAcquired)
	}
	if e.Cause != nil {
		errs = append(errs, e.Cause)
	}
	return append(errs, e.nodeErrors()...)
}
