// Package listing holds the shape of a listing of the locks, shared by package
// quorum, which builds it from what the masters answer, and package admin, which
// hands it out under its own exported types (admin.Listing, admin.LockInfo,
// admin.MasterView, admin.MasterAnswer, admin.LockState) and documents them.
//
// Each type here has the memory layout of admin's type of the same role, field
// for field, so that admin converts a listing without copying it (a test of
// package admin checks the layouts). Change a field on both sides or on neither.
// O is quorum.Owner, which this package cannot import.
package listing

import (
	"math"
	"time"
)

// State is admin.LockState.
type State string

// The states of a lock; admin.StateHeld and the others have the same values.
const (
	StateHeld      State = "held"
	StatePartial   State = "partial"
	StateContested State = "contested"
	StateOrphaned  State = "orphaned"
	StateRevoked   State = "revoked"
)

// NoExpiry is admin.NoExpiry.
const NoExpiry = time.Duration(math.MaxInt64)

// MasterView is admin.MasterView.
type MasterView struct {
	Master    string
	Present   bool
	Truncated bool
	Type      string
	Value     string
	Size      int64
	PTTL      time.Duration
	Err       error
}

// LockInfo is admin.LockInfo.
type LockInfo[O any] struct {
	Name       string
	Key        string
	State      State
	Votes      int
	Quorum     int
	Total      int
	Value      string
	Owner      *O
	Library    string
	Validity   time.Duration
	ObservedAt time.Time
	FreeAt     time.Time
	Fence      int64
	Masters    []MasterView
}

// KeyType is admin.LockInfo.KeyType.
func (li *LockInfo[O]) KeyType() string {
	for _, mv := range li.Masters {
		if mv.Present && mv.Type != "" {
			return mv.Type
		}
	}
	return ""
}

// Deadline is admin.LockInfo.Deadline.
func (li *LockInfo[O]) Deadline() time.Time { return li.ObservedAt.Add(li.Validity) }

// MasterAnswer is admin.MasterAnswer.
type MasterAnswer struct {
	Master   string
	Answered bool
	Err      error
	Error    string
	Keys     int
	Latency  time.Duration
}

// Listing is admin.Listing.
type Listing[O any] struct {
	ObservedAt time.Time
	Match      string
	Quorum     int
	Total      int
	Masters    []MasterAnswer
	Locks      []LockInfo[O]
}

// Answered is admin.Listing.Answered.
func (l *Listing[O]) Answered() int {
	n := 0
	for _, m := range l.Masters {
		if m.Answered {
			n++
		}
	}
	return n
}

// Lock is admin.Listing.Lock.
func (l *Listing[O]) Lock(name string) *LockInfo[O] {
	for i := range l.Locks {
		if l.Locks[i].Name == name {
			return &l.Locks[i]
		}
	}
	return nil
}
