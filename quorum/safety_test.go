package quorum

import (
	"context"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/checker"
	"github.com/redlock/redlock/internal/defaults"
	"github.com/redlock/redlock/internal/faults"
	"github.com/redlock/redlock/internal/redistest"
)

// seedFor returns the seed of a test: REDLOCK_SEED when set, else a fixed value
// derived from the test's name. It is always printed, so a run can be replayed.
func seedFor(t testing.TB) int64 {
	t.Helper()
	if s := os.Getenv("REDLOCK_SEED"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		require.NoError(t, err, "REDLOCK_SEED")
		t.Logf("seed %d (from REDLOCK_SEED)", v)
		return v
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(t.Name()))
	v := int64(h.Sum64() >> 1)
	t.Logf("seed %d (replay with REDLOCK_SEED=%d)", v, v)
	return v
}

// scen is one scenario run: masters, a network of per-client proxies, the history
// recorder, a seeded random source, and the mutants under test (none normally).
type scen struct {
	t   *testing.T
	c   *redistest.Cluster
	net *faults.Net
	rec *checker.Recorder
	mut mutants
	// goRedis sends the clients' hot commands through go-redis (the second
	// wire.Rounder) instead of the pipelined transport.
	goRedis bool
	// stats counts every client's dropped connections and late replies.
	stats *connStats

	rngMu sync.Mutex
	rng   *rand.Rand
}

func newScen(t *testing.T, mut mutants, n int, args ...string) *scen {
	t.Helper()
	seed := seedFor(t)
	rec := checker.New(seed)
	// The Done check excuses lateness only as far as this process's own timers
	// were late at that moment (a loaded machine), never more.
	t.Cleanup(rec.ProbeScheduling())
	return &scen{
		t: t, mut: mut, rec: rec, net: faults.NewNet(t), stats: newConnStats(),
		c:   redistest.Start(t, n, redistest.Options{Args: args}),
		rng: rand.New(rand.NewPCG(uint64(seed), 1)),
	}
}

func (s *scen) intn(n int) int {
	s.rngMu.Lock()
	defer s.rngMu.Unlock()
	return s.rng.IntN(n)
}

func (s *scen) server(name string) *redistest.Server {
	for _, sv := range s.c.Servers {
		if sv.Name == name {
			return sv
		}
	}
	s.t.Fatalf("no master %s", name)
	return nil
}

// violate records a scenario-level failure (a time bound, an unexpected outcome).
func (s *scen) violate(format string, args ...any) {
	s.rec.Violate(checker.KindScenario, format, args...)
}

// checkKeys checks every reachable master's lock keys (fence counters aside): each
// has a TTL, and with quiescent none is left at all.
func (s *scen) checkKeys(quiescent bool, masters ...string) {
	for _, sv := range s.c.Servers {
		if len(masters) > 0 && !slicesContains(masters, sv.Name) {
			continue
		}
		s.checkKeysOn(sv.Name, sv.Client(), quiescent)
	}
}

// checkKeysOn checks the lock keys of one server (a master of the cluster, or a
// server that took a master's place); a server that does not answer is skipped.
func (s *scen) checkKeysOn(name string, cl *redis.Client, quiescent bool) {
	if pttl, ok := lockKeysOn(cl); ok {
		s.rec.Keys(name, pttl, quiescent)
	}
}

// lockKeysOn returns the lock keys of one server (fence counters aside) with
// their PTTL; ok is false when it does not answer.
func lockKeysOn(cl *redis.Client) (pttl map[string]time.Duration, ok bool) {
	ctx := context.Background()
	keys, err := cl.Keys(ctx, defaults.KeyPrefix+"*").Result()
	if err != nil {
		return nil, false // down: nothing to check
	}
	pttl = map[string]time.Duration{}
	for _, k := range keys {
		if strings.HasSuffix(k, fenceSuffix) {
			continue
		}
		if d, err := cl.PTTL(ctx, k).Result(); err == nil && d != -2*time.Nanosecond && d != -2 {
			pttl[k] = d
		}
	}
	return pttl, true
}

// quiesceRounds bounds how many times quiesce waits a TTL for late commands.
const quiesceRounds = 3

// quiesce waits for the masters to be quiet after a run whose keys live at most
// ttl, then checks that no lock key is left (checkKeys(true)). A command that a
// stalled master (a fault, or the machine's own stall) runs after the clients
// stopped sets a key that expires within its TTL: a key seen after ttl + 100ms
// is noted as such and waited for once more, up to quiesceRounds waits in all.
// A key still there then is being written again (something still runs) or has
// no TTL: a violation.
func (s *scen) quiesce(ttl time.Duration) {
	for round := 1; ; round++ {
		time.Sleep(ttl + 100*time.Millisecond)
		late := false
		for _, sv := range s.c.Servers {
			pttl, _ := lockKeysOn(sv.Client())
			for k, d := range pttl {
				late = true
				s.rec.Event("after quiescence %d: master %s holds %s, PTTL %v (a command run late)", round, sv.Name, k, d)
			}
		}
		if !late || round == quiesceRounds {
			break
		}
	}
	s.checkKeys(true)
}

func slicesContains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// values returns key's value on every master ("" when missing or down).
func (s *scen) values(key string) map[string]string {
	out := map[string]string{}
	for _, sv := range s.c.Servers {
		out[sv.Name] = sv.Client().Get(context.Background(), key).Val()
	}
	return out
}

// foreignCheck runs fn (a call with a foreign token) and checks that the owner's
// value of key stayed where it was. A key gone once its TTL, read before fn, may
// have run out by the time it is read again is no change fn made: under the race
// detector on a loaded machine, fn's rounds took longer than the 300 ms a
// scenario's owner held (TestScenarios/extend_and_release_edge_cases: B's key
// "changed by a foreign token" to nothing on four masters, its TTL spent).
func (s *scen) foreignCheck(key, owner string, fn func()) {
	start := time.Now()
	before := s.values(key)
	ttls := map[string]time.Duration{}
	for _, sv := range s.c.Servers {
		ttls[sv.Name] = sv.Client().PTTL(context.Background(), key).Val()
	}
	fn()
	after := s.values(key)
	read := time.Now()
	for name, v := range before {
		if v != owner {
			continue
		}
		if after[name] == "" && !read.Before(start.Add(ttls[name])) {
			continue // expired, perhaps
		}
		s.rec.Foreign(name, key, v, after[name])
	}
}

// scenario is one named fault scenario. It records into s; a broken safety
// property shows up as a violation in s.rec.
type scenario func(s *scen)

// runSafe runs a scenario that must keep every safety property.
func runSafe(t *testing.T, fn scenario, n int, args ...string) {
	s := newScen(t, mutants{}, n, args...)
	fn(s)
	s.rec.Report(t)
}

// runHazard runs a scenario that breaks one of Redlock's assumptions: the checker
// must detect an overlap.
func runHazard(t *testing.T, fn scenario, n int, args ...string) {
	s := newScen(t, mutants{}, n, args...)
	fn(s)
	if !overlapFound(t, s) {
		t.Errorf("the checker did not detect the overlap this hazard causes (seed %d)", s.rec.Seed)
	}
}

// runFenced runs a hazard mitigated by fencing: the locks still overlap (Redlock
// cannot prevent it; the checker must see it, which shows the hazard struck in
// this run) but the fenced resource refused the stale holder (the scenario
// records a violation otherwise), and nothing else may break.
func runFenced(t *testing.T, fn scenario, n int, args ...string) {
	s := newScen(t, mutants{}, n, args...)
	fn(s)
	if !overlapFound(t, s) {
		t.Errorf("the locks did not overlap: the hazard did not strike, so fencing was not tested (seed %d)", s.rec.Seed)
	}
	var other []checker.Violation
	for _, v := range s.rec.Violations() {
		if v.Kind != checker.KindOverlap {
			other = append(other, v)
		}
	}
	for _, v := range other {
		t.Errorf("%s: %s", v.Kind, v.Detail)
	}
	if len(other) > 0 {
		if path, err := s.rec.Write(historyDir(t), t.Name()); err == nil {
			t.Errorf("replay with REDLOCK_SEED=%d; history in %s", s.rec.Seed, path)
		}
	}
}

func overlapFound(t *testing.T, s *scen) bool {
	found := false
	for _, v := range s.rec.Violations() {
		if v.Kind == checker.KindOverlap {
			found = true
			t.Logf("overlap detected: %s", v.Detail)
		}
	}
	return found
}

// historyDir is where a failing test writes its history: REDLOCK_HISTORY_DIR, else
// the test's temporary directory.
func historyDir(t *testing.T) string {
	if d := os.Getenv("REDLOCK_HISTORY_DIR"); d != "" {
		return d
	}
	return t.TempDir()
}

// metEvery reports whether the Manager has connected to every master at least once
// (it knows each master's run_id), so a later run_id change is noticed.
func (m *Manager) metEvery() bool {
	for _, n := range m.nodes {
		n.mu.Lock()
		id := n.runID
		n.mu.Unlock()
		if id == "" {
			return false
		}
	}
	return true
}
