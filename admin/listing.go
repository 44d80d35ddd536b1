package admin

import (
	"math"
	"strings"
	"time"

	"github.com/redlock/redlock/quorum"
)

// What Inspect, InspectStream, Describe and a Scanner's Listing return: each
// lock name merged over the masters into a quorum view. A listing describes,
// it does not guarantee: by the time it is read every lock may have changed
// hands, and nothing in it is held by the reader.

// LockState is the quorum view of one lock name across the masters, as merged
// from what each master answered: a description, not a lock; StateHeld says a
// quorum held one value when it was read, not that it still does.
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
	// StateRevoked: the leading value is a tombstone (Tombstone): an administrator
	// revoked the holder, and the name stays taken until FreeAt, or until the
	// revoked holder's release deletes the tombstone.
	StateRevoked LockState = "revoked"
)

// NoExpiry is the Validity of a lock whose keys on a quorum of masters have no TTL
// (set without PX by some other tool): it never expires by itself.
const NoExpiry = time.Duration(math.MaxInt64)

// MasterView is what one master held under one lock key when the listing read
// it (the key's value, type and TTL read atomically); the master may hold
// something else by now.
type MasterView struct {
	Master string `json:"master"`
	// Present is false when the key does not exist on this master.
	Present bool `json:"present"`
	// Truncated is true when the value is longer than ValueReadCap: Value then
	// holds its first ValueReadCap bytes and Size its length.
	Truncated bool `json:"truncated,omitempty"`
	// Type is the Redis type of the key ("string", "hash", ...).
	Type string `json:"type,omitempty"`
	// Value is the string value, whole unless Truncated. It is a secret of its
	// owner: presenters show Redact(Value), never Value.
	Value string `json:"-"`
	// Size is the length of the string value in bytes.
	Size int64 `json:"size,omitempty"`
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
	// Owner is decoded from Value when package quorum wrote it, else nil.
	Owner *quorum.Owner `json:"owner,omitempty"`
	// Library is Library(Value), or "redisson" for hash keys.
	Library string `json:"library"`
	// Validity is the remaining validity from the quorum's view at ObservedAt: the
	// PTTL that a quorum of masters still exceeds, minus the drift budget of it; zero
	// or negative when no quorum holds the value; NoExpiry when the keys have no TTL.
	Validity   time.Duration `json:"validity_ns"`
	ObservedAt time.Time     `json:"observed_at"`
	// FreeAt is, for a revoked lock (StateRevoked), when the last of its
	// tombstones ends by the masters' TTLs as observed: the name is free then at
	// the latest. Zero for any other state.
	FreeAt time.Time `json:"free_at,omitzero"`
	// Fence is the lock's fence counter when fencing was used, else 0.
	Fence   int64        `json:"fence,omitempty"`
	Masters []MasterView `json:"masters"`
}

// RedactedValue returns Redact(li.Value). When the listing decoded the value as
// one of package quorum's (Owner set), it shortens it without parsing it again.
func (li *LockInfo) RedactedValue() string {
	const version = "rl1." // what every value of package quorum starts with
	const keep = len(version) + 6
	if li.Owner != nil && li.Library == "redlock" && strings.HasPrefix(li.Value, version) && len(li.Value) > keep {
		return li.Value[:keep] + "…"
	}
	return Redact(li.Value)
}

// KeyType is the Redis type of a listed key as the first master that has it
// reports it ("string", "zset", "hash", ...; "" when no master has it).
func (li *LockInfo) KeyType() string { return li.shape().KeyType() }

// Deadline returns when the quorum validity ends, as observed: ObservedAt plus
// Validity. It is not when the holder's lock ends (its own clock decides that).
func (li *LockInfo) Deadline() time.Time { return li.shape().Deadline() }

// MasterAnswer says whether one master answered a listing, and how fast; a
// master that answered may have failed since.
type MasterAnswer struct {
	Master string `json:"master"`
	// Answered is false when the master failed or timed out; Error then says why
	// (it never contains a password).
	Answered bool   `json:"answered"`
	Err      error  `json:"-"`
	Error    string `json:"error,omitempty"`
	// Keys is how many lock keys the master holds under the match.
	Keys    int           `json:"keys"`
	Latency time.Duration `json:"latency_ns"`
}

// Listing is every lock under the key prefix (matching the listing's Match),
// merged over the masters, as observed at ObservedAt. It describes; it does not
// guarantee: locks change hands at any time.
type Listing struct {
	ObservedAt time.Time `json:"observed_at"`
	Match      string    `json:"match"`
	Quorum     int       `json:"quorum"`
	Total      int       `json:"total"`
	// Masters says, in declared order, which masters answered.
	Masters []MasterAnswer `json:"masters"`
	// Locks are sorted by name. A master that did not answer appears in each lock's
	// Masters with Err set.
	Locks []LockInfo `json:"locks"`
}

// Answered returns how many masters answered.
func (l *Listing) Answered() int { return l.shape().Answered() }

// Lock returns the entry of a lock name, or nil when no master holds it. It
// points into l.Locks.
func (l *Listing) Lock(name string) *LockInfo { return lockInfoOf(l.shape().Lock(name)) }
