package quorum

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock/redlock/internal/faults"
	"github.com/redlock/redlock/internal/wire"
)

// mutants are deliberately broken behaviours that TestMutantsAreCaught injects
// into a Manager from here, to prove the safety checker catches each bug class.
// The zero value is the correct algorithm. None of them exists in the product
// build: each is made from outside, by replacing the transport (wire.Rounder), the
// clock or a field of the Manager after New.
type mutants struct {
	halfQuorum           bool // votes >= N/2 instead of N/2+1
	validityFromReply    bool // elapsed time measured from the last reply, not the first send
	noDrift              bool // no drift term in the validity
	plainDelRelease      bool // release with DEL, not compare-and-delete
	extendRecreates      bool // extend SETs the key when it is missing
	noReleaseOnFail      bool // a failed round leaves its partial keys behind
	defaultClientOptions bool // go-redis with its defaults: retries, no context timeouts
	unvalidatedTTL       bool // the masters get a TTL other than the one validated (an hour)
	// forgetAbandoned: a pipeline that forgets the commands its rounds gave up and
	// reads their late replies as the next commands' (wiretest.Forgetful).
	forgetAbandoned bool
	// lateCancel holds the lock's mutex for this long across the end of its
	// validity, as a mutex held across an extension's I/O once did: the loss is
	// signalled late.
	lateCancel time.Duration
}

// apply injects the mutants into m, a Manager over nodes.
func (mut mutants) apply(m *Manager, nodes []Node) {
	if mut.halfQuorum {
		m.quorum = len(m.nodes) / 2
	}
	if mut.noDrift {
		m.cfg.driftFactor, m.cfg.driftExtra = 0, 0
	}
	if mut.defaultClientOptions {
		_ = m.tr.Close()
		m.tr = goRedisRounder(m, func(i int) *redis.Options {
			return &redis.Options{Addr: nodes[i].Addr, Dialer: nodes[i].Dialer, Protocol: 2}
		})
	}
	if mut.forgetAbandoned {
		useForgetful(m, nodes)
	}
	if mut.plainDelRelease || mut.extendRecreates || mut.noReleaseOnFail || mut.unvalidatedTTL {
		wrapRounder(m, func(cmd *wire.Cmd) (*wire.Cmd, func(*wire.Result)) {
			switch {
			case mut.unvalidatedTTL && cmd.Script == extendW:
				c := *cmd
				c.Args = []string{cmd.Args[0], "3600000"}
				return &c, nil
			case mut.unvalidatedTTL && cmd.Script == nil && cmd.Args[0] == "SET":
				c := *cmd
				c.Args = append(append([]string(nil), cmd.Args[:len(cmd.Args)-1]...), "3600000")
				return &c, nil
			case cmd.Script == releaseW && mut.noReleaseOnFail && cmd.Args[1] == "":
				return nil, nil // a failed round's clean-up (it wakes nobody)
			case cmd.Script == releaseW && mut.plainDelRelease:
				return &wire.Cmd{Args: []string{"DEL", cmd.Keys[0]}}, nil
			case cmd.Script == extendW && mut.extendRecreates:
				return &wire.Cmd{Args: []string{"SET", cmd.Keys[0], cmd.Args[0], "PX", cmd.Args[1]}}, func(r *wire.Result) {
					if r.Type == '+' {
						*r = wire.Result{Type: ':', Int: replyOurs, Latency: r.Latency}
					}
				}
			}
			return cmd, nil
		})
	}
	if mut.validityFromReply {
		clk := &lagClock{base: m.cfg.clock}
		m.cfg.clock = clk
		m.tr = &lagRounder{inner: m.tr, clk: clk}
	}
}

// watchLateCancel holds l's mutex across the end of each of its validities, from
// 20ms before it (so that a timer of this goroutine that fires a little late on a
// loaded machine still takes the mutex before the lock's expiry does) to
// lateCancel after it.
func (mut mutants) watchLateCancel(l *Lock) {
	if mut.lateCancel <= 0 {
		return
	}
	go func() {
		for {
			u := l.Until()
			select {
			case <-l.Done():
				return
			case <-time.After(time.Until(u) - 20*time.Millisecond):
			}
			l.mu.Lock()
			if l.until.Equal(u) {
				time.Sleep(time.Until(u) + mut.lateCancel)
			}
			l.mu.Unlock()
			if l.Err() != nil {
				return
			}
		}
	}()
}

// lagClock reads lag behind its base clock.
type lagClock struct {
	base Clock
	lag  atomic.Int64
}

func (c *lagClock) Now() time.Time { return c.base.Now().Add(-time.Duration(c.lag.Load())) }

// Real converts a reading of the clock to real time.
func (c *lagClock) Real(t time.Time) time.Time {
	t = t.Add(time.Duration(c.lag.Load()))
	if dc, ok := c.base.(*faults.DriftClock); ok {
		return dc.Real(t)
	}
	return t
}

// TestMutantsAreCaught proves the checker bites: each deliberately broken variant
// of the algorithm runs a scenario that the correct algorithm passes
// (TestScenarios), and the checker must report at least one violation.
func TestMutantsAreCaught(t *testing.T) {
	withoutRace(t)
	tests := []struct {
		name string
		mut  mutants
		fn   scenario
	}{
		{"quorum N/2", mutants{halfQuorum: true}, scenOverlappingMajorities},
		// scenSlowQuorum: a round waits for its quorum, not for slow masters beyond it.
		{"validity from reply time", mutants{validityFromReply: true}, scenSlowQuorum},
		{"no drift term", mutants{noDrift: true}, scenClockDrift(0.97)},
		{"plain DEL release", mutants{plainDelRelease: true}, scenEdgeCases},
		{"extend recreates missing keys", mutants{extendRecreates: true}, scenEdgeCases},
		{"no release after a failed round", mutants{noReleaseOnFail: true}, scenPartitionThree},
		{"go-redis default options", mutants{defaultClientOptions: true}, scenPartitionThree},
		{"unvalidated ttl reaches the masters", mutants{unvalidatedTTL: true}, scenEdgeCases},
		{"lost signalled late", mutants{lateCancel: 60 * time.Millisecond}, scenRivalPolls},
		{"lost signalled late with keep-alive", mutants{lateCancel: 60 * time.Millisecond}, scenKeepAliveInFlightAtExpiry},
		{"pipeline reads an abandoned reply as the next", mutants{forgetAbandoned: true}, func(s *scen) { scenPipelineStress(5*time.Second, false)(s) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// A scenario is a set of races: on a loaded machine one run can miss
			// the interleaving that shows a mutant (a stalled round, a late
			// worker). The mutant must be caught in one of three runs, each with
			// its own seed; the correct algorithm passes every run (TestScenarios).
			var seeds []int64
			for range 3 {
				s := newScen(t, tt.mut, 5)
				tt.fn(s)
				v := s.rec.Violations()
				for _, x := range v {
					t.Logf("caught: %s: %s", x.Kind, x.Detail)
				}
				if len(v) > 0 {
					return
				}
				seeds = append(seeds, s.rec.Seed)
				t.Logf("not caught with seed %d: running it again", s.rec.Seed)
			}
			t.Errorf("mutant %q was not caught in %d runs (seeds %v)", tt.name, len(seeds), seeds)
		})
	}
}
