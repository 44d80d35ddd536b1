package quorum

import "time"

// LockState is the quorum view of one lock name across the masters.
type LockState string

// Lock states, as `locks` and the console show them.
const (
	// StateHeld: a majority of masters agree on one value.
	StateHeld LockState = "held"
	// StatePartial: one value, present on fewer than a majority (a round in progress,
	// a failed round's leftovers, or keys expiring at different times).
	StatePartial LockState = "partial"
	// StateContested: different values on different masters, none on a majority.
	StateContested LockState = "contested"
	// StateOrphaned: leftovers with no majority and no live holder: a value whose
	// remaining quorum validity is gone, or keys of the wrong type.
	StateOrphaned LockState = "orphaned"
)

// MasterView is what one master holds under one lock key.
type MasterView struct {
	Master string `json:"master"`
	// Present is false when the key does not exist on this master.
	Present bool `json:"present"`
	// Type is the Redis type of the key ("string", "hash", ...).
	Type string `json:"type,omitempty"`
	// Value is the full string value. It is a secret of its owner: presenters show
	// Redact(Value), never Value.
	Value string `json:"-"`
	// PTTL is the remaining TTL on this master; -1 when the key has no TTL.
	PTTL time.Duration `json:"pttl_ns"`
	// Err is set when the master did not answer; the other fields are then empty.
	Err error `json:"-"`
}

// LockInfo is the merged view of one lock name over every master, as observed at
// ObservedAt. It describes; it does not guarantee: by the time it is read the lock
// may have changed hands.
type LockInfo struct {
	Name  string    `json:"name"`
	Key   string    `json:"key"`
	State LockState `json:"state"`
	// Votes is how many masters hold the leading value; Quorum and Total for k/N.
	Votes  int `json:"votes"`
	Quorum int `json:"quorum"`
	Total  int `json:"total"`
	// Value is the leading value (the one on most masters). Secret: show Redact(Value).
	Value string `json:"-"`
	// Owner is decoded from Value when this package wrote it, else nil.
	Owner *Owner `json:"owner,omitempty"`
	// Library is Library(Value), or "redisson" for hash keys.
	Library string `json:"library"`
	// Validity is the remaining validity from the quorum's view at ObservedAt: the
	// PTTL that a quorum of masters still exceeds, minus the drift budget of it; zero
	// or negative when no quorum holds the value.
	Validity   time.Duration `json:"validity_ns"`
	ObservedAt time.Time     `json:"observed_at"`
	// Fence is the lock's fence counter when fencing was used, else 0.
	Fence   int64        `json:"fence,omitempty"`
	Masters []MasterView `json:"masters"`
}

// Deadline returns when the quorum validity ends, as observed: ObservedAt plus Validity.
func (li *LockInfo) Deadline() time.Time { return li.ObservedAt.Add(li.Validity) }
