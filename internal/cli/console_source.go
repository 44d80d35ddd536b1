package cli

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redlock/redlock/internal/health"
	"github.com/redlock/redlock/quorum"
	"github.com/redlock/redlock/topology"
	"github.com/redlock/redlock/tui"
)

// clusterSource is the console's view of a live cluster: node health from the
// prober and locks from the manager's Inspect, gathered in parallel.
type clusterSource struct {
	prober *health.Prober
	mgr    *quorum.Manager
	// embedded masters answer neither INFO server nor CONFIG GET: their missing
	// facts show as unknown rather than as findings.
	embedded bool
	redact   func(string) string
}

// Poll implements tui.Source.
func (s *clusterSource) Poll(ctx context.Context) tui.Snapshot {
	var (
		wg    sync.WaitGroup
		nodes []topology.NodeHealth
		lst   *quorum.Listing
		err   error
	)
	wg.Add(2)
	go func() { defer wg.Done(); nodes = s.prober.Probe(ctx) }()
	go func() { defer wg.Done(); lst, err = s.mgr.Inspect(ctx, "") }()
	wg.Wait()
	snap := tui.Snapshot{At: time.Now(), Nodes: nodes}
	if lst != nil {
		snap.Locks = lst.Locks
		snap.Answered, snap.Total = lst.Answered(), lst.Total
	}
	if err != nil {
		msg := err.Error()
		if s.redact != nil {
			msg = s.redact(msg)
		}
		snap.Err = fmt.Errorf("locks: %s", msg)
	}
	if s.embedded {
		for i := range snap.Nodes {
			unknownForEmbedded(&snap.Nodes[i])
		}
	}
	return snap
}

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

// ForceExpire deletes exactly what was seen on each master.
func (l managerLocker) ForceExpire(ctx context.Context, name string, seen map[string]quorum.Seen) (*quorum.Report, error) {
	return l.m.ForceExpireSeen(ctx, name, seen)
}
