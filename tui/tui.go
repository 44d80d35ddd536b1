// Package tui is the redlock console: a Bubble Tea program that shows the masters'
// health and the live locks of one cluster, and lets an operator take, extend,
// release and force-expire locks.
//
// The console talks to Redis only through the small interfaces defined here
// (Source, Locker, Held), so tests drive it with fakes. All I/O runs in tea.Cmds:
// Update and View never block. One app-level tick drives the countdowns from the
// deadlines observed at the last poll; poll replies carry a request id and stale
// ones are dropped.
//
// The root Model only composes (as gh-dash does): a program context shared by
// every component (options, the one key map, the one styles struct, the clock of
// the frame, the size), the poller (polls, snapshots, history), the panels
// (header, nodes, the locks table with its selection, sort and filter, the detail
// pane), a stack of modals (filter, acquire prompt, force-expire confirmation,
// help) that takes the keys while open, the status line and the locks the console
// holds. Each component has its own Update or key handling and SetSize; panels
// draw from a narrow view model, never from the root.
package tui

import (
	"context"
	"slices"
	"time"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/quorum"
	"github.com/redlock/redlock/topology"
)

// Snapshot is one observation of the cluster: node health and live locks, taken
// at At. Err, when set, is shown in the status line; the other fields still count.
// Answered of Total masters answered the listing (both zero when not known): fewer
// than a quorum shows a banner that the listing is incomplete.
//
// The locks are Locks, with Fresh laid over them and Gone left out (Merged). A
// source whose full listing is read in the background returns that listing as
// Locks, the same slice for as long as it has not changed (it is never changed:
// the console derives its order, counts and sorted rows from it once, whatever
// its size), and in Fresh the rows on screen read for this answer. A source that
// reads every lock at every poll leaves Fresh and Gone empty.
type Snapshot struct {
	At    time.Time
	Nodes []topology.NodeHealth
	Locks []admin.LockInfo
	// Fresh are rows read for this answer: each replaces the row of its name in
	// Locks, or adds one.
	Fresh []admin.LockInfo
	// Gone are names found gone when read for this answer, which Locks (older) may
	// still show: they are left out, even from Fresh.
	Gone            []string
	Answered, Total int
	Err             error
	// Scan is how far an incremental listing has got (the table's title shows it
	// until a pass is complete); nil when the source lists every lock at every poll.
	Scan *admin.ScanProgress
	// Events are the lock events the source saw since its previous answer, and
	// EventSource says where they come from (EventsKeyspace, EventsListing). When
	// EventSource is empty the console compares consecutive snapshots itself.
	Events      []Event
	EventSource string
	// CPU is the processor time the console's process used over Over, the time
	// since the source's previous answer (zero when not measured): the cost of
	// polling, shown in the table's title.
	CPU, Over time.Duration
	// Kinds is the KIND column of rows the source read as primitives, by row name
	// ("sem 2/3", "multi 3", "shared 2", "leader t7"); rows without an entry get
	// what their own key and value tell (lock, multi, sem, shared, leader).
	Kinds map[string]string
}

// Merged returns the snapshot's locks: Locks with Fresh laid over them and Gone
// left out, sorted by name (naturally: item-2 before item-10). It copies them;
// Locks is not changed.
func (s Snapshot) Merged() []admin.LockInfo {
	out := newLockSet(s, nil).merged()
	if sameListing(out, s.Locks) {
		out = slices.Clone(out)
	}
	return out
}

// Event sources a Source names in Snapshot.EventSource.
const (
	// EventsKeyspace: keyspace notifications, merged over the masters; a lock held
	// for a moment is seen.
	EventsKeyspace = "keyspace notifications"
	// EventsListing: differences between complete listings; a lock held for less
	// than a listing pass can be missed.
	EventsListing = "listing differences"
)

// Source observes the cluster. Poll must return within a bounded time (the node
// timeout): the console calls it from a tea.Cmd, once per refresh interval; a call that
// outlives its context is abandoned and the next one may start before it returns.
// visible are the names of the locks on screen and of a page of rows on either
// side (rows that move onto the screen when others go): a source whose full
// listing is incremental reads them afresh at every poll, and answers with them
// in Snapshot.Fresh (those found gone in Snapshot.Gone) beside its listing.
type Source interface {
	Poll(ctx context.Context, visible []string) Snapshot
}

// Locker takes and force-expires locks. A *quorum.Manager fits it through a thin
// adapter; the console keeps the Held values it acquired.
type Locker interface {
	// TryAcquire makes one acquisition round; it does not wait for a busy lock.
	TryAcquire(ctx context.Context, name string, ttl time.Duration) (Held, error)
	// ForceExpire deletes, on each master, exactly what the operator saw there
	// (admin.Admin.ForceExpireSeen): a lock that changed hands since is kept and
	// reported as OutcomeForeign.
	ForceExpire(ctx context.Context, name string, seen map[string]admin.Seen) (*quorum.Report, error)
	// Revoke revokes, on each master, exactly what the operator saw there
	// (admin.Admin.RevokeListed): each value becomes its tombstone, which keeps
	// the name taken until the holder's validity has surely ended (free, zero when
	// no tombstone was written) or until the holder releases. A lock that changed
	// hands since is kept and reported as OutcomeForeign.
	Revoke(ctx context.Context, name string, seen map[string]admin.Seen) (free time.Time, rep *quorum.Report, err error)
	// Lookup reads one lock on every master now (admin.Admin.Describe); nil when
	// no master holds it. A force-expire that found the lock in other hands uses it
	// to say who holds it now.
	Lookup(ctx context.Context, name string) (*admin.LockInfo, error)
}

// Held is a lock this console holds. *quorum.Lock implements it.
type Held interface {
	Name() string
	// Token is the full lock value; it is never shown on screen.
	Token() string
	Until() time.Time
	Votes() quorum.Report
	Extend(ctx context.Context, ttl time.Duration) error
	Release(ctx context.Context) error
}

// Options configure the console. Zero fields take the defaults noted.
type Options struct {
	// Cluster is the cluster's name, shown in the header.
	Cluster string
	// Masters are the masters' names in declared order: their rows show before the
	// first poll answers.
	Masters []string
	// Quorum is the number of votes a lock needs (N/2+1 by default).
	Quorum int
	// DefaultTTL is the TTL the acquire prompt proposes (30s by default).
	DefaultTTL time.Duration
	// MaxTTL bounds the TTL the prompt accepts (no bound when zero).
	MaxTTL time.Duration
	// Interval is the refresh interval of polls (1s by default).
	Interval time.Duration
	// Frame is the period of the app-level tick that redraws countdowns (100ms by default).
	Frame time.Duration
	// ActionTimeout bounds one acquire, extend, release or force-expire (5s by default).
	ActionTimeout time.Duration
	// ReadOnly hides and refuses the writing keys.
	ReadOnly bool
	// Note is shown in the header, e.g. that restart quarantine is off.
	Note string
	// Now is the clock (time.Now by default); tests fix it.
	Now func() time.Time
	// Copy puts text on the terminal's clipboard (OSC 52); nil when not available.
	// Only the token of a lock this console holds is ever copied.
	Copy func(text string) error
}

func (o *Options) defaults() {
	if o.Quorum <= 0 {
		o.Quorum = len(o.Masters)/2 + 1
	}
	if o.DefaultTTL <= 0 {
		o.DefaultTTL = 30 * time.Second
	}
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.Frame <= 0 {
		o.Frame = 100 * time.Millisecond
	}
	if o.ActionTimeout <= 0 {
		o.ActionTimeout = 5 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}
