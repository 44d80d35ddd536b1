package cli

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/internal/connect"
	"github.com/redlock/redlock/internal/events"
	"github.com/redlock/redlock/internal/health"
	"github.com/redlock/redlock/quorum"
	"github.com/redlock/redlock/topology"
	"github.com/redlock/redlock/tui"
)

// clusterSource is the console's view of a live cluster. The full listing is
// kept by a background loop (incremental SCAN: it never blocks a poll, however
// many locks there are); each poll probes the masters' health and reads the rows
// on screen afresh, and answers with the listing (shared, unchanged between
// passes) and those fresh rows beside it (tui.Snapshot.Fresh, Gone). Lock events come from keyspace notifications when a quorum of
// masters has them on, else from the differences between complete passes.
type clusterSource struct {
	prober *health.Prober
	adm    *admin.Admin // the listing, fresh rows and what primitive each is
	// embedded masters answer neither INFO server nor CONFIG GET: their missing
	// facts show as unknown rather than as findings.
	embedded    bool
	redact      func(string) string
	listing     *listingLoop
	eventSource string
	cpu         cpuClock

	// gone holds the names a fresh read found gone, with the listing's complete
	// passes at that moment: the listing may still show them until a pass that
	// began after they went has completed (two passes later). mu guards it and is
	// never held across I/O.
	mu   sync.Mutex
	gone map[string]int
}

// sourceSettings configure newClusterSource.
type sourceSettings struct {
	embedded bool
	redact   func(string) string
	interval time.Duration
}

// newClusterSource builds the console's source and the manager for its actions,
// and starts the background listing; cleanup stops everything.
func newClusterSource(c *topology.Cluster, set sourceSettings, opts ...quorum.Option) (*clusterSource, *quorum.Manager, func(), error) {
	if set.interval <= 0 {
		set.interval = time.Second
	}
	prober, err := health.NewProber(c)
	if err != nil {
		return nil, nil, nil, err
	}
	mgr, err := connect.Manager(c, opts...)
	if err != nil {
		_ = prober.Close()
		return nil, nil, nil, err
	}
	s := &clusterSource{prober: prober, adm: admin.New(mgr), embedded: set.embedded, redact: set.redact, eventSource: tui.EventsListing, gone: map[string]int{}}
	ctx, cancel := context.WithCancel(context.Background())
	var clients []*redis.Client
	if !set.embedded {
		if clients, err = connect.Clients(c, c.NodeTimeout); err == nil {
			// Unread or off on too many masters: the console lists instead.
			if on, _ := notificationsOn(ctx, c, clients, max(c.NodeTimeout, 200*time.Millisecond)); on < c.Quorum() {
				closeClients(clients)
				clients = nil
			}
		}
	}
	// A listing step carries a thousand keys per master: give it more than a node timeout.
	stepTimeout := max(8*c.NodeTimeout, time.Second)
	s.listing = startListing(s.adm.NewScanner(""), set.interval, stepTimeout, clients == nil)
	var streams sync.WaitGroup
	if clients != nil {
		s.eventSource = tui.EventsKeyspace
		streams.Add(1)
		go func() {
			defer streams.Done()
			keyspaceStream(ctx, c, clients, "*", s.listing.addEvent, nil)
		}()
	}
	cleanup := func() {
		cancel()
		s.listing.stop()
		streams.Wait()
		closeClients(clients)
		_ = mgr.Close()
		_ = prober.Close()
	}
	return s, mgr, cleanup, nil
}

func closeClients(clients []*redis.Client) {
	for _, c := range clients {
		_ = c.Close()
	}
}

// Poll implements tui.Source: the masters' health and the rows on screen, read
// now, over the background listing.
func (s *clusterSource) Poll(ctx context.Context, visible []string) tui.Snapshot {
	var (
		wg       sync.WaitGroup
		nodes    []topology.NodeHealth
		fresh    *admin.Listing
		freshErr error
		kinds    map[string]string
	)
	wg.Add(1)
	go func() { defer wg.Done(); nodes = s.prober.Probe(ctx) }()
	if len(visible) > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if fresh, freshErr = s.adm.Describe(ctx, visible); fresh != nil {
				kinds = s.annotateWhole(ctx, fresh)
			}
		}()
	}
	v := s.listing.take(ctx)
	wg.Wait()
	snap := tui.Snapshot{At: time.Now(), Nodes: nodes, Scan: &v.progress, EventSource: s.eventSource, Kinds: kinds}
	snap.CPU, snap.Over = s.cpu.since()
	if v.lst != nil {
		snap.Locks = v.lst.Locks
		snap.Answered, snap.Total = v.lst.Answered(), v.lst.Total
	}
	err := v.err
	var rows []admin.LockInfo
	if fresh != nil {
		// Also when fewer than a quorum answered now: the listing may predate the
		// failure, and the rows on screen must not show keys on masters that did
		// not answer (Describe's rows carry their errors) nor hide the banner.
		rows = fresh.Locks
		if snap.Total == 0 {
			snap.Answered, snap.Total = fresh.Answered(), fresh.Total
		}
		snap.Answered = min(snap.Answered, fresh.Answered())
	} else {
		visible = nil // nothing was read afresh
	}
	if err == nil && freshErr != nil {
		err = freshErr
	}
	// Only a quorum's answer says a lock is gone for good (until the listing
	// catches up); a row on screen without a fresh row leaves this poll's answer
	// either way.
	remembered := visible
	if freshErr != nil {
		remembered = nil
	}
	gone := s.forget(remembered, rows, v.progress.Passes)
	for _, n := range visible {
		if !slices.ContainsFunc(rows, func(li admin.LockInfo) bool { return li.Name == n }) {
			gone[n] = true
		}
	}
	// The listing goes out as it is, shared with earlier answers: the console
	// lays the fresh rows over it and leaves the gone names out.
	snap.Fresh = rows
	snap.Gone = slices.Sorted(maps.Keys(gone))
	if err != nil {
		snap.Err = fmt.Errorf("locks: %s", redactWith(s.redact, err.Error()))
	}
	if s.embedded {
		for i := range snap.Nodes {
			unknownForEmbedded(&snap.Nodes[i])
		}
	}
	if ctx.Err() == nil { // an answer that will be dropped leaves the events queued
		snap.Events = s.listing.drain()
	}
	return snap
}

// annotateWhole annotates the rows of fresh (annotateRows: what primitive each
// key is), counting each semaphore and multi-name hold whole: the other permit
// slots and names the listing knows are read too, although the filter hides
// them ("sem 2/3" when one slot is on screen, not "sem 1/3"). Only fresh's own
// rows are kept.
func (s *clusterSource) annotateWhole(ctx context.Context, fresh *admin.Listing) map[string]string {
	n := len(fresh.Locks)
	if extra := admin.Siblings(s.listing.peek(), fresh.Locks); len(extra) > 0 {
		if more, err := s.adm.Describe(ctx, extra); err == nil && more != nil {
			fresh.Locks = append(fresh.Locks, more.Locks...)
		}
	}
	kinds := annotateRows(ctx, s.adm, fresh)
	fresh.Locks = fresh.Locks[:n]
	return kinds
}

// forget records which visible names the fresh rows show gone (and which came
// back), drops the records the listing has caught up with, and returns the names
// the listing may still show although they are gone.
func (s *clusterSource) forget(visible []string, fresh []admin.LockInfo, passes int) map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range visible {
		if slices.ContainsFunc(fresh, func(li admin.LockInfo) bool { return li.Name == n }) {
			delete(s.gone, n)
		} else {
			s.gone[n] = passes
		}
	}
	out := make(map[string]bool, len(s.gone))
	for n, p := range s.gone {
		if passes >= p+2 {
			delete(s.gone, n)
			continue
		}
		out[n] = true
	}
	return out
}

// addEvent queues a lock event for the next poll.
func (l *listingLoop) addEvent(ev events.Event) { l.publishEvents([]events.Event{ev}) }

// unknownForEmbedded drops the findings that only say an embedded master does not
// implement INFO server or CONFIG GET.
func unknownForEmbedded(h *topology.NodeHealth) {
	h.ConfigError, h.InfoError = "", ""
	kept := h.Findings[:0]
	for _, f := range h.Findings {
		if f.Code == topology.CodeConfigDenied || f.Code == topology.CodeInfoDenied {
			continue
		}
		kept = append(kept, f)
	}
	h.Findings = kept
}

// managerLocker adapts a *quorum.Manager to tui.Locker.
type managerLocker struct{ m *quorum.Manager }

// TryAcquire makes one acquisition round.
func (l managerLocker) TryAcquire(ctx context.Context, name string, ttl time.Duration) (tui.Held, error) {
	lk, err := l.m.TryAcquire(ctx, name, ttl)
	if err != nil {
		return nil, err
	}
	return lk, nil
}

// Lookup reads one lock on every master now.
func (l managerLocker) Lookup(ctx context.Context, name string) (*admin.LockInfo, error) {
	lst, err := admin.New(l.m).Describe(ctx, []string{name})
	if err != nil {
		return nil, err
	}
	return lst.Lock(name), nil
}

// ForceExpire deletes exactly what was seen on each master, the primitives'
// keys included (a permit slot, a leadership: their waiters are woken).
func (l managerLocker) ForceExpire(ctx context.Context, name string, seen map[string]admin.Seen) (*quorum.Report, error) {
	return admin.New(l.m).ForceExpireListed(ctx, name, seen)
}

// Revoke revokes exactly what was seen on each master (RevokeListed), the
// primitives' keys included. A shared key is refused: its holders are revoked
// one by one, as force-expire NAME shows them.
func (l managerLocker) Revoke(ctx context.Context, name string, seen map[string]admin.Seen) (time.Time, *quorum.Report, error) {
	return admin.New(l.m).RevokeListed(ctx, name, seen)
}

// cpuClock measures the processor time the process used between two calls.
type cpuClock struct {
	mu  sync.Mutex
	cpu time.Duration
	at  time.Time
}

// since returns the processor time used since the previous call, and the wall
// time over which it was used (both zero at the first call, or when the platform
// cannot tell).
func (c *cpuClock) since() (cpu, over time.Duration) {
	now, used := time.Now(), processCPU()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.at.IsZero() && used > 0 {
		cpu, over = used-c.cpu, now.Sub(c.at)
	}
	c.cpu, c.at = used, now
	return cpu, over
}
