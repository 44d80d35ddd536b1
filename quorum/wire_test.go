package quorum

import (
	"context"
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/internal/wire"
)

// outcomes returns the per-master outcomes of a report.
func outcomes(rep *Report) []Outcome {
	out := make([]Outcome, len(rep.Nodes))
	for i, r := range rep.Nodes {
		out[i] = r.Outcome
	}
	return out
}

// TestWireMatchesGoRedis runs every hot command through the fast path and through
// go-redis on the same masters and expects the same outcomes, per master, in
// declared order.
func TestWireMatchesGoRedis(t *testing.T) {
	c := redistest.Start(t, 3, redistest.Options{})
	paths := map[string]*Manager{
		"wire":     managerFor(t, c),
		"go-redis": managerFor(t, c, withGoRedisHot()),
	}
	ctx := context.Background()
	const ours, theirs = "rl1.ours", "rl1.theirs"
	ok3 := []Outcome{OutcomeOK, OutcomeOK, OutcomeOK}
	// setup puts, per master, nil (missing), ours, theirs or a hash under key.
	setup := func(t *testing.T, key string, vals ...string) {
		for i, v := range vals {
			cl := c.Servers[i].Client()
			require.NoError(t, cl.Del(ctx, key).Err())
			switch v {
			case "":
			case "hash":
				require.NoError(t, cl.HSet(ctx, key, "f", "v").Err())
			default:
				require.NoError(t, cl.Set(ctx, key, v, time.Minute).Err())
			}
		}
	}
	tests := []struct {
		name  string
		vals  []string
		round func(m *Manager, key string) *Report
		want  []Outcome
		after []string // values left per master; nil: not checked
	}{
		{"set on free masters", []string{"", "", ""},
			func(m *Manager, key string) *Report { return m.wireRound(ctx, "op", key, wireSet, ours, "", 60000) },
			ok3, []string{ours, ours, ours}},
		{"set where another owner holds", []string{theirs, "", theirs},
			func(m *Manager, key string) *Report { return m.wireRound(ctx, "op", key, wireSet, ours, "", 60000) },
			[]Outcome{OutcomeForeign, OutcomeOK, OutcomeForeign}, []string{theirs, ours, theirs}},
		{"set on a hash", []string{"hash", "", ""},
			func(m *Manager, key string) *Report { return m.wireRound(ctx, "op", key, wireSet, ours, "", 60000) },
			[]Outcome{OutcomeForeign, OutcomeOK, OutcomeOK}, nil}, // the key exists: not set
		{"release ours, missing, theirs", []string{ours, "", theirs},
			func(m *Manager, key string) *Report { return m.wireRound(ctx, "op", key, wireRelease, ours, "", 0) },
			[]Outcome{OutcomeOK, OutcomeMissing, OutcomeForeign}, []string{"", "", theirs}},
		{"release a hash", []string{"hash", ours, ours},
			func(m *Manager, key string) *Report { return m.wireRound(ctx, "op", key, wireRelease, ours, "", 0) },
			[]Outcome{OutcomeError, OutcomeOK, OutcomeOK}, nil},
		{"extend ours, missing, theirs", []string{ours, "", theirs},
			func(m *Manager, key string) *Report { return m.wireRound(ctx, "op", key, wireExtend, ours, "", 90000) },
			[]Outcome{OutcomeOK, OutcomeMissing, OutcomeForeign}, []string{ours, "", theirs}},
		// A key of another type is not ours: extend counts it foreign (a majority of
		// them is ErrLost, TestExtendOfAKeyReplacedByAnotherTypeIsLost), not a master down.
		{"extend a hash", []string{ours, "hash", ours},
			func(m *Manager, key string) *Report { return m.wireRound(ctx, "op", key, wireExtend, ours, "", 90000) },
			[]Outcome{OutcomeOK, OutcomeForeign, OutcomeOK}, nil},
	}
	for _, tt := range tests {
		for _, path := range []string{"wire", "go-redis"} {
			t.Run(tt.name+"/"+path, func(t *testing.T) {
				key := "wire:" + tt.name
				setup(t, key, tt.vals...)
				rep := tt.round(paths[path], key)
				assert.Equal(t, tt.want, outcomes(rep))
				for i, r := range rep.Nodes {
					assert.Equal(t, c.Servers[i].Name, r.Node, "declared order")
					if r.Outcome == OutcomeError {
						assert.ErrorIs(t, r.Err, ErrWrongType)
					} else {
						assert.NoError(t, r.Err)
					}
				}
				assert.Equal(t, rep.count(OutcomeOK), rep.Votes)
				if tt.after != nil {
					assert.Equal(t, tt.after, valuesOn(t, c, key))
				}
			})
		}
	}
}

// valuesOn returns key's value on every master in order ("" when missing or not a string).
func valuesOn(t *testing.T, c *redistest.Cluster, key string) []string {
	t.Helper()
	out := make([]string, len(c.Servers))
	for i, s := range c.Servers {
		out[i], _ = s.Client().Get(context.Background(), key).Result()
	}
	return out
}

func TestWireScriptFlushFallsBackToEval(t *testing.T) {
	c, m := testCluster(t, 3)
	ctx := context.Background()
	l, err := m.TryAcquire(ctx, "flush", time.Minute)
	require.NoError(t, err)
	for _, s := range c.Servers {
		require.NoError(t, s.Client().ScriptFlush(ctx).Err())
	}
	require.NoError(t, l.Extend(ctx, 2*time.Minute))
	for _, s := range c.Servers {
		require.NoError(t, s.Client().ScriptFlush(ctx).Err())
	}
	require.NoError(t, l.Release(ctx))
	assert.Empty(t, keysOn(t, c, "lock:flush"))
	// The connections stayed in step: the next round reads its own replies.
	l, err = m.TryAcquire(ctx, "flush", time.Minute)
	require.NoError(t, err)
	assert.Equal(t, 3, l.Votes().Votes)
	require.NoError(t, l.Release(ctx))
}

// A master that answers after the node timeout must not have its late reply read
// by the next round: the connection is dropped and dialled again.
func TestWireLateReplyIsNeverReadByTheNextRound(t *testing.T) {
	c, m := testCluster(t, 3)
	ctx := context.Background()
	l, err := m.TryAcquire(ctx, "warm", time.Minute)
	require.NoError(t, err)
	require.NoError(t, l.Release(ctx))

	c.Servers[2].Stop()
	start := time.Now()
	l, err = m.TryAcquire(ctx, "late", time.Minute)
	require.NoError(t, err)
	assert.Less(t, time.Since(start), time.Second, "bounded by the node timeout")
	rep := l.Votes()
	assert.Equal(t, []Outcome{OutcomeOK, OutcomeOK, OutcomeError}, outcomes(&rep))
	c.Servers[2].Cont()
	// c applies the SET late and its "+OK" arrives on the dropped connection. The
	// release then runs on a fresh connection and reads the script's own reply.
	require.Eventually(t, func() bool { return keysOn(t, c, "lock:late")["c"] != "" }, 5*time.Second, 10*time.Millisecond)
	rep2 := m.release(ctx, opRelease, "lock:late", l.Token())
	assert.Equal(t, []Outcome{OutcomeOK, OutcomeOK, OutcomeOK}, outcomes(rep2))
	// A foreign value on c, then our SET: an answer out of step would read "OK".
	require.NoError(t, c.Servers[2].Client().Set(ctx, "lock:late", "rl1.other", time.Minute).Err())
	_, err = m.TryAcquire(ctx, "late", time.Minute)
	require.NoError(t, err)
	rep3 := m.wireRound(ctx, opAcquire, "lock:late", wireSet, "rl1.third", "", 60000)
	assert.Equal(t, []Outcome{OutcomeForeign, OutcomeForeign, OutcomeForeign}, outcomes(rep3))
}

func TestWireReconnectsAfterRestartAndQuarantines(t *testing.T) {
	c, m := testCluster(t, 3, WithRestartQuarantine(time.Hour))
	ctx := context.Background()
	// Brand-new masters are younger than the window: all quarantined at first.
	_, err := m.TryAcquire(ctx, "q", time.Second)
	require.ErrorIs(t, err, ErrUnavailable)
	assert.Len(t, m.quarantineEnds(), 3)

	// A short window: the first round meets every master, then the quarantine of
	// brand-new masters runs out.
	m2 := managerFor(t, c, WithRestartQuarantine(2*time.Second))
	_, _ = m2.TryAcquire(ctx, "q", time.Second)
	require.Eventually(t, func() bool { return len(m2.quarantineEnds()) == 0 }, 5*time.Second, 20*time.Millisecond)
	l, err := m2.TryAcquire(ctx, "q", 10*time.Second)
	require.NoError(t, err)
	require.NoError(t, l.Release(ctx))
	assert.Empty(t, m2.quarantineEnds())

	// b restarts: its run_id changes. The idle connection is found closed and
	// dialled again, and INFO server quarantines b before its vote is counted.
	c.Servers[1].Restart(false)
	l, err = m2.TryAcquire(ctx, "q", 10*time.Second)
	require.NoError(t, err)
	rep := l.Votes()
	assert.Equal(t, []Outcome{OutcomeOK, OutcomeQuarantined, OutcomeOK}, outcomes(&rep))
	assert.ErrorIs(t, rep.Nodes[1].Err, ErrQuarantined)
	assert.Contains(t, m2.quarantineEnds(), "b")
	require.NoError(t, l.Release(ctx))
}

func TestWireAuthAndSelect(t *testing.T) {
	const pw = "s3cret-pass"
	sv := redistest.StartOne(t, "a", redistest.Options{})
	ctx := context.Background()
	require.NoError(t, sv.Client().ACLSetUser(ctx, "locker", "on", ">"+pw, "~*", "&*", "+@all").Err())
	require.NoError(t, sv.Client().ConfigSet(ctx, "requirepass", pw).Err())
	admin := redis.NewClient(&redis.Options{Addr: sv.Addr(), Password: pw, DB: 3})
	t.Cleanup(func() { _ = admin.Close() })
	tests := []struct {
		name    string
		node    Node
		wantErr string
	}{
		{"password and db", Node{Name: "a", Addr: sv.Addr(), Password: pw, DB: 3}, ""},
		{"named user", Node{Name: "a", Addr: sv.Addr(), Username: "locker", Password: pw, DB: 3}, ""},
		{"wrong password", Node{Name: "a", Addr: sv.Addr(), Password: "wrong", DB: 3}, "AUTH"},
		{"no password", Node{Name: "a", Addr: sv.Addr(), DB: 3}, "NOAUTH"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := New([]Node{tt.node}, WithRestartQuarantine(0), WithNodeTimeout(time.Second))
			require.NoError(t, err)
			t.Cleanup(func() { _ = m.Close() })
			l, err := m.TryAcquire(ctx, "auth", time.Minute)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				assert.NotContains(t, err.Error(), pw)
				assert.NotContains(t, err.Error(), "wrong")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, l.Token(), admin.Get(ctx, "lock:auth").Val(), "written to db 3")
			require.NoError(t, l.Release(ctx))
			assert.Zero(t, admin.Exists(ctx, "lock:auth").Val())
		})
	}
}

func TestWireHonoursDialer(t *testing.T) {
	c := redistest.Start(t, 3, redistest.Options{})
	var dials atomic.Int32
	nodes := make([]Node, 3)
	for i, s := range c.Servers {
		nodes[i] = Node{Name: s.Name, Addr: "unresolvable.invalid:" + string(rune('1'+i)), Dialer: func(ctx context.Context, network, _ string) (net.Conn, error) {
			dials.Add(1)
			if i == 0 {
				return nil, errors.New("dialer refuses")
			}
			var d net.Dialer
			return d.DialContext(ctx, network, s.Addr())
		}}
	}
	m, err := New(nodes, WithRestartQuarantine(0), WithNodeTimeout(time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	ctx := context.Background()
	for range 3 {
		l, err := m.TryAcquire(ctx, "dialer", time.Minute)
		require.NoError(t, err)
		rep := l.Votes()
		assert.Equal(t, []Outcome{OutcomeError, OutcomeOK, OutcomeOK}, outcomes(&rep))
		assert.Contains(t, rep.Nodes[0].Err.Error(), "dialer refuses")
		require.ErrorIs(t, l.Release(ctx), ErrPartialRelease)
	}
	// a is dialled every round (and refused); b and c once each, then reused.
	assert.EqualValues(t, 3*2+2, dials.Load())
}

// Concurrent rounds share one connection per master: their commands are
// pipelined, and each reads its own replies.
func TestWireConcurrentRoundsShareOneConnectionPerMaster(t *testing.T) {
	c := redistest.Start(t, 3, redistest.Options{})
	var dials atomic.Int32
	nodes := make([]Node, 3)
	for i, s := range c.Servers {
		nodes[i] = Node{Name: s.Name, Addr: s.Addr(), Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		}}
	}
	m, err := New(nodes, WithRestartQuarantine(0), WithNodeTimeout(time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	ctx := context.Background()
	var wg sync.WaitGroup
	var ok atomic.Int32
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				name := "conc:" + string(rune('a'+g))
				l, err := m.TryAcquire(ctx, name, time.Minute)
				if !assert.NoError(t, err, "round %d", i) {
					return
				}
				rep := l.Votes()
				assert.GreaterOrEqual(t, rep.Votes, 2)
				for _, nr := range rep.Nodes {
					if nr.Outcome != OutcomeOK {
						// A master later than twice the quorum's time (the race
						// detector, the load) is not awaited: nothing else.
						assert.ErrorIs(t, nr.Err, wire.ErrNotAwaited, "%s", nr.Node)
					}
				}
				if assert.NoError(t, l.Release(ctx)) {
					ok.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	assert.EqualValues(t, 16*20, ok.Load())
	assert.EqualValues(t, 3, dials.Load(), "one connection per master")
	for _, s := range c.Servers {
		assert.Empty(t, s.Keys(ctx))
	}
}

func TestWireCloseDropsConnections(t *testing.T) {
	_, m := testCluster(t, 3)
	ctx := context.Background()
	l, err := m.TryAcquire(ctx, "close", time.Minute)
	require.NoError(t, err)
	require.NoError(t, l.Release(ctx))
	require.NoError(t, m.Close())
	assert.Zero(t, pipeGoroutines(), "the pipes' goroutines ended")
	_, err = m.TryAcquire(ctx, "close", time.Minute)
	require.ErrorIs(t, err, ErrUnavailable)
	assert.Contains(t, err.Error(), "closed")
}

// The round itself allocates only its report and one string: the command, its
// encoding, the results, the connections and their readers are reused.
func TestWireRoundAllocations(t *testing.T) {
	_, m := testCluster(t, 5)
	ctx := context.Background()
	allocs := testing.AllocsPerRun(50, func() {
		rep := m.wireRound(ctx, opAcquire, "lock:allocs", wireSet, "rl1.v", "", 60000)
		if rep.Votes < 3 {
			t.Fatal("no quorum")
		}
		m.wireRound(ctx, opRelease, "lock:allocs", wireRelease, "rl1.v", "", 0)
	})
	// Each round allocates its report (two) and one string: the SET's TTL in
	// decimal, the release's queue key.
	assert.LessOrEqual(t, allocs, 6.0, "two rounds, three allocations each")
}

// A command whose round gave up before the master answered keeps its place on
// the connection: its late reply is read and thrown away, and the next round on
// the same connection reads its own reply, not that one.
func TestWireAbandonedReplyIsDrainedNotMisread(t *testing.T) {
	st := newConnStats()
	c, m := testCluster(t, 3, WithNodeTimeout(2*time.Second), WithObserver(st))
	ctx := context.Background()
	l, err := m.TryAcquire(ctx, "warm", time.Minute)
	require.NoError(t, err)
	require.NoError(t, l.Release(ctx))
	dropped := st.Dropped("c")

	// c holds a foreign value for "second", so an in-step reply to our SET there
	// is "foreign"; a reply out of step would be the OK of the abandoned SET. a
	// holds one too, so that the second round gets no quorum before c answers (an
	// acquisition round that a quorum granted does not wait long for the others).
	require.NoError(t, c.Servers[2].Client().Set(ctx, "lock:second", "rl1.other", time.Minute).Err())
	require.NoError(t, c.Servers[0].Client().Set(ctx, "lock:second", "rl1.other", time.Minute).Err())
	c.Servers[2].Stop()
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	rep1 := m.wireRound(short, opAcquire, "lock:first", wireSet, "rl1.first", "", 60000)
	cancel()
	assert.Equal(t, []Outcome{OutcomeOK, OutcomeOK, OutcomeError}, outcomes(rep1))
	assert.ErrorIs(t, rep1.Nodes[2].Err, wire.ErrNotAwaited, "a and b granted: the round ended at its quorum")

	done := make(chan *Report)
	go func() { done <- m.wireRound(ctx, opAcquire, "lock:second", wireSet, "rl1.second", "", 60000) }()
	time.Sleep(100 * time.Millisecond) // the second SET is written behind the first
	c.Servers[2].Cont()
	rep2 := <-done
	assert.Equal(t, []Outcome{OutcomeForeign, OutcomeOK, OutcomeForeign}, outcomes(rep2))
	assert.Equal(t, "rl1.other", rep2.Nodes[2].holder)
	assert.EqualValues(t, 1, st.Late("c"), "the abandoned SET's reply was read and discarded (an observe.EventLateReply)")
	assert.Equal(t, dropped, st.Dropped("c"), "the connection stayed in step")
	assert.Equal(t, "rl1.first", keysOn(t, c, "lock:first")["c"], "the abandoned SET took effect late")
}

// A master that leaves a command unanswered for a whole node timeout is hung: the
// connection is dropped, the commands on it fail, and the next round dials again.
func TestWireHungMasterDropsTheConnection(t *testing.T) {
	st := newConnStats()
	c, m := testCluster(t, 3, WithNodeTimeout(100*time.Millisecond), WithObserver(st))
	ctx := context.Background()
	l, err := m.TryAcquire(ctx, "warm", time.Minute)
	require.NoError(t, err)
	require.NoError(t, l.Release(ctx))
	c.Servers[2].Stop()
	rep := m.wireRound(ctx, opAcquire, "lock:hung", wireSet, "rl1.hung", "", 60000)
	assert.Equal(t, []Outcome{OutcomeOK, OutcomeOK, OutcomeError}, outcomes(rep))
	assert.ErrorIs(t, rep.Nodes[2].Err, os.ErrDeadlineExceeded)
	require.Eventually(t, func() bool { return st.Dropped("c") == 1 }, time.Second, 5*time.Millisecond, "an observe.EventConnDropped")
	c.Servers[2].Cont()
	require.NoError(t, c.Servers[2].Client().Set(ctx, "lock:next", "rl1.other", time.Minute).Err())
	rep = m.wireRound(ctx, opAcquire, "lock:next", wireSet, "rl1.next", "", 60000)
	assert.Equal(t, []Outcome{OutcomeOK, OutcomeOK, OutcomeForeign}, outcomes(rep))
}

// The fair queue's round takes the fast path too: granted on a free lock, refused
// (Foreign) when the key is held or another waiter is ahead, and sent again with
// EVAL after SCRIPT FLUSH.
func TestWireFairRound(t *testing.T) {
	c, m := testCluster(t, 3)
	ctx := context.Background()
	const key = "lock:wire-fair"
	first, err := m.newFairWaiter(false)
	require.NoError(t, err)
	second, err := m.newFairWaiter(false)
	require.NoError(t, err)
	// Later in the queue, by a millisecond: a digit appended to a score with
	// microseconds is past a double's precision (the sorted set saw a tie, which
	// went by the random ids: this test failed 1 run in about 10).
	enqueued := time.Now()
	first.score = queueScore(enqueued)
	second.score = queueScore(enqueued.Add(time.Millisecond))

	for _, s := range c.Servers {
		require.NoError(t, s.Client().ScriptFlush(ctx).Err())
	}
	rep := m.fairRound(ctx, key, "rl1.second", 60000, second)
	assert.Equal(t, []Outcome{OutcomeOK, OutcomeOK, OutcomeOK}, outcomes(rep), "alone in the queue: granted (EVAL after NOSCRIPT)")
	rep = m.fairRound(ctx, key, "rl1.first", 60000, first)
	assert.Equal(t, []Outcome{OutcomeForeign, OutcomeForeign, OutcomeForeign}, outcomes(rep), "the key is held")
	m.release(ctx, opRelease, key, "rl1.second")

	third, err := m.newFairWaiter(false)
	require.NoError(t, err)
	third.score = queueScore(enqueued.Add(2 * time.Millisecond))
	rep = m.fairRound(ctx, key, "rl1.third", 60000, third)
	assert.Equal(t, []Outcome{OutcomeForeign, OutcomeForeign, OutcomeForeign}, outcomes(rep), "first is ahead in the queue")
	rep = m.fairRound(ctx, key, "rl1.first", 60000, first)
	assert.Equal(t, []Outcome{OutcomeOK, OutcomeOK, OutcomeOK}, outcomes(rep), "the head is granted")
	assert.Equal(t, "rl1.first", keysOn(t, c, key)["a"])
}
