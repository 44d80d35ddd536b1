package cli

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/metrics"
	"github.com/redlock/redlock/quorum"
	"github.com/redlock/redlock/topology"
)

// lockMetrics is what one poll's listing adds up to: the exporter's lock gauges,
// built while the listing streams by. Plain locks are counted as they pass and
// dropped; the keys of the other primitives (few) are kept until the stream has
// passed and then grouped (admin.Admin.Primitives). Its size does not grow
// with the number of locks, only with the policies and elections.
type lockMetrics struct {
	states   map[admin.LockState]float64
	kinds    map[admin.PrimitiveKind]float64
	policies map[string]*policyMetrics
	permits  map[string]float64
	shared   map[string]float64
	leaders  []leaderMetrics
}

// policyMetrics are the held locks of one policy.
type policyMetrics struct {
	n float64
	// firstAt is the earliest acquisition among held locks with owner metadata
	// (the oldest lock's age is the poll's time minus it).
	firstAt  time.Time
	minValid time.Duration
	// freeAt is when the last of the policy's revoked names is free (zero: none
	// revoked).
	freeAt time.Time
}

// leaderMetrics is one election's leadership.
type leaderMetrics struct {
	name    string
	term    float64
	leading bool
}

func newLockMetrics(c *topology.Cluster) *lockMetrics {
	a := &lockMetrics{
		states:   map[admin.LockState]float64{admin.StateHeld: 0, admin.StatePartial: 0, admin.StateContested: 0, admin.StateOrphaned: 0, admin.StateRevoked: 0},
		kinds:    map[admin.PrimitiveKind]float64{admin.KindLock: 0, admin.KindMulti: 0, admin.KindSemaphore: 0, admin.KindShared: 0, admin.KindLeader: 0},
		policies: map[string]*policyMetrics{metrics.DefaultPolicy: {}},
		permits:  map[string]float64{},
		shared:   map[string]float64{},
	}
	for _, pol := range c.Locks {
		a.policies[pol.Match] = &policyMetrics{}
	}
	for name := range a.policies {
		a.permits[name], a.shared[name] = 0, 0
	}
	return a
}

// lockMetrics streams the listing of every lock into the lock gauges.
func (s *lockSession) lockMetrics(ctx context.Context, c *topology.Cluster) (*lockMetrics, error) {
	head, locks, err := s.adm().InspectStream(ctx, "*")
	a := newLockMetrics(c)
	var kept []admin.LockInfo
	for li := range locks {
		switch {
		case isPrimitiveKey(li):
			kept = append(kept, copyLockInfo(li))
		case !admin.Bookkeeping(li):
			a.add(c, &admin.Primitive{Kind: admin.KindLock, Name: li.Name, Locks: []*admin.LockInfo{li}})
		}
	}
	if len(kept) == 0 {
		return a, err
	}
	prims, perr := s.adm().Primitives(ctx, &admin.Listing{ObservedAt: head.ObservedAt, Match: head.Match, Quorum: head.Quorum,
		Total: head.Total, Masters: head.Masters, Locks: kept})
	for i := range prims {
		a.add(c, &prims[i])
	}
	return a, errors.Join(err, perr)
}

// add counts one primitive.
func (a *lockMetrics) add(c *topology.Cluster, pr *admin.Primitive) {
	held := func(name string, owner *quorum.Owner, validity time.Duration) {
		pm := a.policies[policyLabel(c, name)]
		pm.n++
		if owner != nil && !owner.At.IsZero() && (pm.firstAt.IsZero() || owner.At.Before(pm.firstAt)) {
			pm.firstAt = owner.At
		}
		if pm.n == 1 || validity < pm.minValid {
			pm.minValid = validity
		}
	}
	for _, li := range pr.Locks {
		if li.State == admin.StateRevoked {
			if pm := a.policies[policyLabel(c, pr.Name)]; li.FreeAt.After(pm.freeAt) {
				pm.freeAt = li.FreeAt
			}
		}
	}
	a.kinds[pr.Kind]++
	if st := pr.State(); st != admin.StateFree {
		a.states[st]++
	}
	switch pr.Kind {
	case admin.KindSemaphore:
		a.permits[policyLabel(c, pr.Name)] += float64(pr.Held)
		for _, li := range pr.Locks {
			if li.State == admin.StateHeld {
				held(pr.Name, li.Owner, li.Validity)
			}
		}
	case admin.KindShared:
		a.shared[policyLabel(c, pr.Name)] += float64(pr.Held)
		for _, h := range pr.Holders {
			if h.Validity > 0 {
				held(pr.Name, h.Owner, h.Validity)
			}
		}
	case admin.KindLeader:
		lm := leaderMetrics{name: pr.Name, leading: pr.Leader != nil}
		if l := pr.Leader; l != nil {
			lm.term = float64(l.Term)
			held(pr.Name, l.Owner, l.Validity)
		}
		a.leaders = append(a.leaders, lm)
	default: // a lock, each name of a multi-name hold
		for _, li := range pr.Locks {
			if li.State == admin.StateHeld {
				held(li.Name, li.Owner, li.Validity)
			}
		}
	}
}

// collect sends the gauges, the ages as of at (the poll's end).
func (a *lockMetrics) collect(gauge func(d *prometheus.Desc, v float64, labels ...string), c *topology.Cluster, at time.Time) {
	for _, l := range a.leaders {
		if l.leading {
			gauge(descElectionTerm, l.term, l.name)
		}
		lead := 0.0
		if l.leading {
			lead = 1
		}
		gauge(descElectionLead, lead, l.name)
	}
	for k, v := range a.kinds {
		gauge(descPrimitives, v, string(k))
	}
	for name := range a.policies {
		gauge(descPermitsHeld, a.permits[name], name)
		gauge(descSharedHolders, a.shared[name], name)
	}
	for st, v := range a.states {
		gauge(descLocks, v, string(st))
	}
	for name, pm := range a.policies {
		ttl := c.TTL
		for _, pol := range c.Locks {
			if pol.Match == name && pol.TTL > 0 {
				ttl = pol.TTL
			}
		}
		gauge(descPolicyTTL, ttl.Seconds(), name)
		gauge(descPolicyLocks, pm.n, name)
		oldest := time.Duration(0)
		if !pm.firstAt.IsZero() {
			oldest = max(0, at.Sub(pm.firstAt))
		}
		gauge(descOldest, oldest.Seconds(), name)
		if !pm.freeAt.IsZero() {
			gauge(descRevokedFree, float64(pm.freeAt.UnixMilli())/1000, name)
		}
		if pm.n > 0 && pm.minValid != admin.NoExpiry {
			gauge(descMinValidity, pm.minValid.Seconds(), name)
		}
	}
}
