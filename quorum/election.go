package quorum

import (
	"context"
	"sync"
	"time"
)

// Leader election over the quorum (anchors: etcd's concurrency.Election and
// client-go's leaderelection).
//
// The leadership of election NAME is a Redlock mutex on NAME:leader, taken by
// Campaign with a keep-alive. Once a candidate holds it, a term is handed out as a
// fencing number: the counter NAME:leader:fence is read from every master that
// answers and raised to max+1 on a majority that still holds the leadership (as
// WithFencing does), and the same script writes the leader's record NAME:leader:term
// (token, term, since, value) there. A term is strictly increasing per election as
// long as a majority keeps its data (SAFETY.md). Leader reads the record from every
// master and reports a leader only when one token holds NAME:leader, with its
// record, on a quorum with validity left. Observe follows changes: a wake-up
// message on the election's channel is only a hint to read again; what it reports
// is always a quorum read.

// maxLeaderValue bounds the value a leader publishes (Campaign, Proclaim), in
// bytes: it is stored on every master and read by every observer. A longer
// value is refused with ErrInvalidArgument, whose message gives the bound.
const maxLeaderValue = 4096

// Election is one election name on a Manager. It is safe for concurrent use; it
// holds no state of its own besides its name. The zero value is not usable: get
// an Election from Manager.Election.
type Election struct {
	m    *Manager
	name string
}

// LeaderInfo is the leader of an election as a quorum read it. It describes; it
// does not guarantee: leadership may have moved by the time it is read.
type LeaderInfo struct {
	// Election is the election's name.
	Election string `json:"election"`
	// Value is what the leader published (Campaign, Proclaim). Hostile input:
	// escape it before printing.
	Value string `json:"value"`
	// Term is the leadership's fencing number: strictly increasing per election.
	Term int64 `json:"term"`
	// Since is when the leader took office (its clock, Unix milliseconds precision).
	Since time.Time `json:"since"`
	// Validity is how long the leadership lasts, from ObservedAt, on the quorum's
	// view: the PTTL that a quorum of masters still exceeds, minus its drift budget
	// and the read's own duration (a PTTL may have been read at its start).
	Validity time.Duration `json:"validity_ns"`
	// ObservedAt is when the read ended.
	ObservedAt time.Time `json:"observed_at"`
	// Votes is how many masters hold the leadership; Quorum how many it needs.
	Votes  int `json:"votes"`
	Quorum int `json:"quorum"`
	// Owner is decoded from the leadership's lock value (host, pid, label).
	Owner *Owner `json:"owner,omitempty"`
}

// Observation is one report of Observe: the leader after a change, or nil when
// nobody leads (Err then matches ErrNoLeader), or a read that failed (Err says why:
// a *RoundError naming the masters).
type Observation struct {
	Leader *LeaderInfo
	Err    error
}

// Leadership is a won Campaign: this candidate leads until Done fires. Its term
// is the fencing number to hand to downstream systems so they can refuse a deposed
// leader's late writes. The embedded Lock is the leadership's lock (NAME:leader):
// Until, Done, Context, Err, Extend, Token, Verify and Votes as for any lock,
// kept alive in the background; its Release resigns: Done fires, and the
// leadership is deleted on every master where it is still ours, which wakes the
// other candidates and the observers (the leader's record stays: it names a token
// that no longer leads). Leading guarantees, like holding any lock, nothing after
// Until.
type Leadership struct {
	*Lock
	e    *Election
	term int64

	mu       sync.Mutex
	value    string
	valueSeq int64 // the proclamation that value is (0: Campaign's)
	seq      int64 // the last proclamation's number given out
}

// Election returns the election name on m. The name follows ValidateName.
func (m *Manager) Election(name string) (*Election, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	return &Election{m: m, name: name}, nil
}

// Name returns the election's name.
func (e *Election) Name() string { return e.name }

// Key returns the Redis key of the election's leadership (NAME:leader).
func (e *Election) Key() string { return e.m.Key(e.name) + leaderSuffix }

// Campaign blocks until this candidate leads the election, or ctx ends (an error
// matching ErrNotAcquired and ctx.Err()), or the Manager is closed (an error
// matching ErrNotAcquired). It then publishes value (Leader and
// Observe report it) under a new term. The leadership is kept alive (WithKeepAlive
// in opts replaces the default, Fraction 0.5 without caps) and is lost when a
// majority no longer holds it: Done and Context fire no later than Until. ttl is
// the leadership's TTL, checked as Acquire checks it; value is at most
// 4096 bytes; opts may also carry WithLockOwner and WithLossWatch
// (others are ErrInvalidArgument).
func (e *Election) Campaign(ctx context.Context, value string, ttl time.Duration, opts ...LockOption) (*Leadership, error) {
	return e.campaign(ctx, value, ttl, opts)
}

// Leader reads the current leader from every master: a leader is reported only
// when one candidate's leadership and record are on a quorum of masters, with
// validity left. When nobody leads the error matches ErrNoLeader; when too few
// masters answered for anyone to lead it is a *RoundError matching ErrUnavailable.
func (e *Election) Leader(ctx context.Context) (*LeaderInfo, error) {
	return e.leader(ctx)
}

// Observe reports the leader now and at every change (another term, another value,
// nobody leading), until ctx ends or the Manager is closed; the channel is then
// closed. A wake-up message
// published by a campaign, a resignation or a proclamation is a hint to read
// again; the leader's validity ending and a poll every poll interval (at most a
// second) are the others. Every report is a quorum read, so it never names a leader
// that does not hold a quorum. A slow reader misses intermediate changes, never the
// latest one.
func (e *Election) Observe(ctx context.Context) <-chan Observation {
	return e.observe(ctx)
}

// Term returns the leadership's term: the fencing number, strictly increasing per
// election under the conditions of WithFencing.
func (l *Leadership) Term() int64 { return l.term }

// Value returns the value published by Campaign or by the latest Proclaim that a
// quorum took (the one with the highest number among those that succeeded, not
// the one that returned last): the value Leader reports while this leadership
// lasts and no later Proclaim succeeds.
func (l *Leadership) Value() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.value
}

// Proclaim publishes a new value without an election (etcd's Proclaim): it
// rewrites the record on every master where the leadership is still ours and
// needs a quorum of them; the term does not change. Leader reports a value only
// once a quorum has it (or a later one), so a failed Proclaim is not reported. It fails with ErrLost once
// the leadership is gone. Concurrent Proclaims are ordered by the order of their
// calls: an earlier one that reaches a master after a later one is refused there,
// and fails with ErrSuperseded when that leaves it without a quorum.
func (l *Leadership) Proclaim(ctx context.Context, value string) error {
	return l.proclaim(ctx, value)
}
