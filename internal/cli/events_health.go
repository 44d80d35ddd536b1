package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/internal/human"
	"github.com/redlock/redlock/topology"
)

// The masters' health in the events stream: a dead cluster must not look like a
// quiet one. Every master is pinged every probe period; a master that stops
// answering, answers again, and the quorum lost or regained are events of their
// own, and events exits 1 when no quorum has answered for -quorum-wait.

// Kinds of the masters' events.
const (
	evMasterUnreachable = "master-unreachable"
	evMasterReachable   = "master-reachable"
	evQuorumLost        = "quorum-lost"
	evQuorumRegained    = "quorum-regained"
)

// maxProbePeriod bounds the time between two pings of the masters, whatever
// -interval says (keyspace mode is often run with a long -interval).
const maxProbePeriod = time.Second

// errNoQuorum: fewer than a quorum of masters answered.
var errNoQuorum = errors.New("no quorum of masters answers")

// masterEvent is one line of the events stream about the masters.
type masterEvent struct {
	Time  time.Time `json:"time"`
	Event string    `json:"event"`
	// Name is empty: the event is about a master, not a lock.
	Name string `json:"name"`
	Mode string `json:"mode"`
	// Masters are the masters answering after the event.
	Masters []string `json:"masters"`
	Master  string   `json:"master,omitempty"`
	Error   string   `json:"error,omitempty"`
	Quorum  int      `json:"quorum"`
	Total   int      `json:"total"`
}

func (e masterEvent) humanLine() string {
	what := ""
	switch e.Event {
	case evMasterUnreachable:
		what = "master " + e.Master + ": " + e.Error
	case evMasterReachable:
		what = "master " + e.Master + " answers again"
	case evQuorumLost:
		what = fmt.Sprintf("fewer than a quorum (%d) of masters answer: locks cannot be taken, extended or seen", e.Quorum)
	case evQuorumRegained:
		what = fmt.Sprintf("a quorum (%d) of masters answers again", e.Quorum)
	}
	return fmt.Sprintf("%s %-13s %s (%d of %d masters answer) [%s]", e.Time.Format("15:04:05.000"), e.Event, what, len(e.Masters), e.Total, e.Mode)
}

// masterProbe pings the masters of cluster through clients (in declared order).
type masterProbe struct {
	cluster *topology.Cluster
	clients []*redis.Client
	timeout time.Duration
	redact  func(string) string
}

// ping pings every master at once and returns, per master, nil or why it did
// not answer within the timeout (escaped and redacted, for output).
func (p *masterProbe) ping(ctx context.Context) []string {
	errs := make([]string, len(p.clients))
	var wg sync.WaitGroup
	for i, c := range p.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, p.timeout)
			defer cancel()
			err := c.Ping(cctx).Err()
			switch {
			case err == nil:
			case errors.Is(err, context.DeadlineExceeded) || cctx.Err() != nil:
				errs[i] = "no answer within " + human.Duration(p.timeout)
			default:
				errs[i] = escape.Text(p.redact(err.Error()))
			}
		}()
	}
	wg.Wait()
	return errs
}

// answering names the masters whose errs entry is empty.
func (p *masterProbe) answering(errs []string) []string {
	out := []string{}
	for i, e := range errs {
		if e == "" {
			out = append(out, p.cluster.Masters[i].Name)
		}
	}
	return out
}

// check is the first ping: errNoQuorum (wrapped, naming every master that did
// not answer and why) when fewer than a quorum answered.
func (p *masterProbe) check(ctx context.Context) error {
	errs := p.ping(ctx)
	up := p.answering(errs)
	if len(up) >= p.cluster.Quorum() {
		return nil
	}
	var why []string
	for i, e := range errs {
		if e != "" {
			why = append(why, p.cluster.Masters[i].Name+" ("+e+")")
		}
	}
	return fmt.Errorf("%w: %d of %d answered, a quorum needs %d; not answering: %s",
		errNoQuorum, len(up), len(errs), p.cluster.Quorum(), strings.Join(why, ", "))
}

// watch pings the masters every period until ctx ends, and emits an event for
// every change: a master that stops or starts answering, the quorum lost or
// regained. It returns errNoQuorum (wrapped) once no quorum has answered for
// lostFor, or when ctx ends while the quorum is lost; nil when ctx ends with a
// quorum answering.
func (p *masterProbe) watch(ctx context.Context, period, lostFor time.Duration, mode string, emit func(lineDoc)) error {
	prev := make([]string, len(p.clients)) // every master answered at the start
	var lostAt time.Time
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			if !lostAt.IsZero() {
				return fmt.Errorf("%w since %s", errNoQuorum, lostAt.Format(time.TimeOnly))
			}
			return nil
		case <-tick.C:
		}
		errs := p.ping(ctx)
		if ctx.Err() != nil {
			continue // the interrupt, not the masters
		}
		now := time.Now()
		up := p.answering(errs)
		ev := masterEvent{Time: now, Mode: mode, Masters: up, Quorum: p.cluster.Quorum(), Total: len(errs)}
		for i, e := range errs {
			switch {
			case e != "" && prev[i] == "":
				ev.Event, ev.Master, ev.Error = evMasterUnreachable, p.cluster.Masters[i].Name, e
				emit(ev)
			case e == "" && prev[i] != "":
				ev.Event, ev.Master, ev.Error = evMasterReachable, p.cluster.Masters[i].Name, ""
				emit(ev)
			}
		}
		prev = errs
		ev.Master, ev.Error = "", ""
		switch lost := len(up) < p.cluster.Quorum(); {
		case lost && lostAt.IsZero():
			lostAt = now
			ev.Event = evQuorumLost
			emit(ev)
		case !lost && !lostAt.IsZero():
			lostAt = time.Time{}
			ev.Event = evQuorumRegained
			emit(ev)
		}
		if !lostAt.IsZero() && now.Sub(lostAt) >= lostFor {
			return fmt.Errorf("%w for %s (-quorum-wait): %d of %d answer, a quorum needs %d",
				errNoQuorum, human.Duration(now.Sub(lostAt)), len(up), len(errs), p.cluster.Quorum())
		}
	}
}
