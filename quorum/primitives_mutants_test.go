package quorum

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"

	"github.com/redlock/redlock/internal/checker"
	"github.com/redlock/redlock/internal/wire"
)

// The primitives' mutants: broken designs, each injected from here through the
// acquisition's override (no switch in product code), each run in a scenario that
// the correct primitive passes (TestPrimitiveScenarios). The checker must catch
// every one.

// withAcquirer replaces the acquisition's acquirer. Tests only.
func withAcquirer(fn func(m *Manager, name string, lc *lockConfig) (acquirer, error)) LockOption {
	return func(c *lockConfig) { c.override = fn }
}

// majorityCountScript counts permits on each master: a master grants while fewer
// than N holders are there. Taking a simple majority of such grants is the trap
// SAFETY.md's Semaphores section describes: with 5 masters and 2 permits, three
// holders can each win 3 masters.
var majorityCountScript = wire.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1`)

// countAcquirer is the majority-count semaphore.
type countAcquirer struct {
	m    *Manager
	name string
	key  string
	n    int
}

func withMajorityCount() LockOption {
	return withAcquirer(func(m *Manager, name string, lc *lockConfig) (acquirer, error) {
		return &countAcquirer{m: m, name: name, key: m.Key(name) + ":count", n: lc.permits}, nil
	})
}

func (a *countAcquirer) waitKey() string                  { return a.key }
func (a *countAcquirer) describe(o *Owner)                { o.Kind, o.Count = "sem", a.n }
func (a *countAcquirer) won(context.Context, *Lock) error { return nil }
func (a *countAcquirer) round(ctx context.Context, start time.Time, value string, ttl time.Duration, _ *fairWaiter) (*Lock, error) {
	m := a.m
	rep := m.scriptOnAll(ctx, opAcquire, a.key, majorityCountScript, []string{a.key}, granted, value, msArg(ttl), strconv.Itoa(a.n))
	if until, ok := m.score(rep, start, ttl); ok {
		// The holders' zset extends and releases as shared holders do.
		return &Lock{m: m, name: a.name, key: a.key, value: value, ttl: ttl, votes: *rep, start: start, until: until, untilFrom: start, keysUntil: m.keysUntil(start, ttl), prim: sharedLock{}}, nil
	}
	m.scriptOnAll(backgroundFor(ctx), opRelease, a.key, sharedReleaseScript, []string{a.key}, nil, value, "")
	return nil, m.roundError(rep)
}

// someNamesScript takes the names that are free and votes when it took any: not
// all or none.
var someNamesScript = wire.NewScript(`
local n = 0
for i = 1, #KEYS do
  if redis.call('SET', KEYS[i], ARGV[1], 'NX', 'PX', ARGV[2]) then n = n + 1 end
end
if n > 0 then return 1 end
return 0`)

// someNamesAcquirer is the multi-name lock that is not all or none.
type someNamesAcquirer struct{ *multiAcquirer }

func withSomeNames() LockOption {
	return withAcquirer(func(m *Manager, name string, lc *lockConfig) (acquirer, error) {
		lc.override = nil
		a, err := m.newMultiAcquirer(lc)
		if err != nil {
			return nil, err
		}
		return someNamesAcquirer{a.(*multiAcquirer)}, nil
	})
}

func (a someNamesAcquirer) round(ctx context.Context, start time.Time, value string, ttl time.Duration, _ *fairWaiter) (*Lock, error) {
	m := a.m
	rep := m.scriptOnAll(ctx, opAcquire, a.keys[0], someNamesScript, a.keys, granted, value, msArg(ttl))
	if until, ok := m.score(rep, start, ttl); ok {
		return &Lock{m: m, name: a.names[0], key: a.keys[0], value: value, ttl: ttl, votes: *rep, start: start, until: until, untilFrom: start, keysUntil: m.keysUntil(start, ttl),
			prim: &multiLock{names: a.names, keys: a.keys}}, nil
	}
	m.scriptOnAll(backgroundFor(ctx), opRelease, a.keys[0], multiReleaseScript, a.keys, released, value, "0")
	return nil, m.roundError(rep)
}

// withReadersElsewhere keeps the shared holders in a key of their own (NAME:readers),
// which neither an exclusive holder's SET NX nor the shared grant looks across:
// shared and exclusive holders no longer exclude each other.
func withReadersElsewhere() LockOption {
	return withAcquirer(func(m *Manager, name string, lc *lockConfig) (acquirer, error) {
		if !lc.shared {
			return nil, checkName(name) // the exclusive client: a plain lock
		}
		return newSharedAcquirer(m, name, m.Key(name)+":readers"), nil
	})
}

// lowestIncrScript raises the term on each master that granted the leadership
// without reading a quorum first; the candidate takes the lowest reply.
var lowestIncrScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
return redis.call('INCR', KEYS[2])`)

// lowestIncrAcquirer is the election whose term is not a quorum counter.
type lowestIncrAcquirer struct{ *electAcquirer }

func withLowestIncrTerm() LockOption {
	return withAcquirer(func(m *Manager, name string, _ *lockConfig) (acquirer, error) {
		e, err := m.Election(name)
		if err != nil {
			return nil, err
		}
		return lowestIncrAcquirer{&electAcquirer{e: e}}, nil
	})
}

func (a lowestIncrAcquirer) won(ctx context.Context, l *Lock) error {
	leader, counter, _ := a.e.keys()
	var terms []int64
	rep := a.e.m.fanout(ctx, opFenceRaise, leader, func(ctx context.Context, n *node) (Outcome, error) {
		v, err := lowestIncrScript.Run(ctx, n.client, []string{leader, counter}, l.value).Int64()
		if err != nil || v < 0 {
			return OutcomeForeign, err
		}
		return OutcomeOK, nil
	})
	// Read back what each master now has where it granted: the lowest is the term.
	for i, nr := range rep.Nodes {
		if nr.Outcome == OutcomeOK {
			if v, err := a.e.m.nodes[i].client.Get(ctx, counter).Int64(); err == nil {
				terms = append(terms, v)
			}
		}
	}
	if len(terms) == 0 {
		return a.e.m.fenceRound(l, rep)
	}
	a.term, a.since = slices.Min(terms), time.Now()
	l.fence = a.term
	return nil
}

// TestPrimitiveMutantsAreCaught proves the primitives' checker bites: one broken
// design per invariant, caught under a fault of the suite.
func TestPrimitiveMutantsAreCaught(t *testing.T) {
	withoutRace(t)
	fault := func(name string) primFault {
		for _, f := range primFaults {
			if f.name == name {
				return f
			}
		}
		t.Fatalf("no fault %s", name)
		return primFault{}
	}
	load := func(name string) workload {
		for _, w := range primWorkloads {
			if w.name == name {
				return w
			}
		}
		t.Fatalf("no workload %s", name)
		return workload{}
	}
	tests := []struct {
		name string
		w    workload
		f    primFault
		opt  LockOption
		want string // the violation kind that must show
	}{
		{"multi-name lock that takes the free names", load("multi-name"), fault("no fault"), withSomeNames(), checker.KindOverlap},
		{"shared holders in a key of their own", load("shared"), fault("no fault"), withReadersElsewhere(), checker.KindOverlap},
	}
	t.Run("semaphore counted per master, simple majority", func(t *testing.T) {
		s := newScen(t, mutants{}, 5)
		scenPermitsOverlappingMajorities(withMajorityCount())(s)
		caught(t, s, checker.KindTooMany)
	})
	t.Run("term from the lowest INCR of the granting masters", func(t *testing.T) {
		s := newScen(t, mutants{}, 5)
		scenElectionOverlappingMajorities(withLowestIncrTerm())(s)
		caught(t, s, checker.KindTerm)
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newScen(t, mutants{}, 5)
			runPrim(s, tt.w, tt.f, 2*time.Second, []LockOption{tt.opt})
			caught(t, s, tt.want)
		})
	}
}

// caught requires a violation of kind in s's history, and logs the first few.
func caught(t *testing.T, s *scen, kind string) {
	t.Helper()
	n := 0
	for _, v := range s.rec.Violations() {
		if v.Kind == kind {
			if n++; n <= 3 {
				t.Logf("caught: %s: %s", v.Kind, v.Detail)
			}
		}
	}
	assert.NotZero(t, n, "the mutant was not caught as %s (seed %d)", kind, s.rec.Seed)
}
