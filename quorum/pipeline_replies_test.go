package quorum

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/faults"
	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/internal/wire"
)

// A key holding a value longer than maxValueLen (not a lock of this package, but
// any string) is, to SET NX, simply held: the go-redis path says Foreign. On the
// fast path SET NX GET reads the value back; one too long to keep must still be
// read past, not taken for a protocol error that drops the master's connection
// and fails every other round's command in flight on it.
func TestAttackPipeLongForeignValueKeepsConnection(t *testing.T) {
	st := newConnStats()
	c, m := testCluster(t, 1, WithNodeTimeout(time.Second), WithObserver(st))
	ctx := context.Background()
	big := strings.Repeat("x", 3*4096) // longer than the wire's longest kept bulk
	require.NoError(t, c.Servers[0].Client().Set(ctx, "lock:big", big, time.Minute).Err())
	require.Equal(t, 1, m.wireRound(ctx, opAcquire, "lock:warm", wireSet, "rl1.warm", "", 60000).Votes)

	var wg sync.WaitGroup
	var errs atomic.Int32
	stop := make(chan struct{})
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := "lock:other" + string(rune('a'+g))
			for {
				select {
				case <-stop:
					return
				default:
				}
				rep := m.wireRound(ctx, opAcquire, key, wireSet, "rl1.o", "", 60000)
				if rep.Nodes[0].Outcome == OutcomeError {
					errs.Add(1)
				}
				m.wireRound(ctx, opRelease, key, wireRelease, "rl1.o", "", 0)
			}
		}()
	}
	for range 20 {
		rep := m.wireRound(ctx, opAcquire, "lock:big", wireSet, "rl1.mine", "", 60000)
		assert.Equal(t, []Outcome{OutcomeForeign}, outcomes(rep), "%v", rep.Nodes[0].Err)
	}
	close(stop)
	wg.Wait()
	assert.Zero(t, errs.Load(), "other rounds' commands failed with the long reply's connection")
	assert.Zero(t, st.Dropped(""), "connections dropped")
	assert.Equal(t, big, c.Servers[0].Client().Get(ctx, "lock:big").Val())
}

// Error replies in the middle of a pipeline (WRONGTYPE from SET NX GET and from
// the scripts, NOSCRIPT after SCRIPT FLUSH, OOM under maxmemory) keep the
// connection in step: every round, among hundreds in flight on one connection
// per master, gets the outcome its own key calls for.
func TestAttackPipeErrorRepliesMidPipeline(t *testing.T) {
	st := newConnStats()
	c, m := testCluster(t, 3, WithNodeTimeout(2*time.Second), WithObserver(st))
	ctx := context.Background()
	for _, s := range c.Servers {
		require.NoError(t, s.Client().HSet(ctx, "lock:hash", "f", "v").Err())
		require.NoError(t, s.Client().Set(ctx, "lock:theirs", "rl1.theirs", time.Hour).Err())
	}
	stop := make(chan struct{})
	var nemesis sync.WaitGroup
	nemesis.Add(1)
	go func() {
		defer nemesis.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(3 * time.Millisecond):
			}
			for _, s := range c.Servers {
				_ = s.Client().ScriptFlush(ctx).Err()
			}
		}
	}()
	var wg sync.WaitGroup
	var bad atomic.Int32
	// check checks rep's outcomes against want, and returns the masters an
	// acquisition did not await. An acquisition whose outcome is decided (a
	// quorum granted it, or so many masters refused that none can) does not
	// wait long for a master that the race detector or the load stalled: not
	// awaited is no wrong outcome then; a granted round's SET there, if it was
	// still queued, is never written, and the extension and release that
	// follow find the key missing there (skip).
	check := func(what string, rep *Report, want Outcome, skip map[string]bool) map[string]bool {
		refused := 0
		for _, nr := range rep.Nodes {
			if nr.Outcome != OutcomeOK && !errors.Is(nr.Err, wire.ErrNotAwaited) {
				refused++
			}
		}
		decided := rep.Votes >= m.quorum || refused > len(rep.Nodes)-m.quorum
		var notAwaited map[string]bool
		for _, nr := range rep.Nodes {
			if rep.Op == opAcquire && decided && errors.Is(nr.Err, wire.ErrNotAwaited) {
				if notAwaited == nil {
					notAwaited = map[string]bool{}
				}
				notAwaited[nr.Node] = true
				continue
			}
			if nr.Outcome != want && !(skip[nr.Node] && nr.Outcome == OutcomeMissing) {
				if bad.Add(1) <= 5 {
					t.Errorf("%s on %s: %v (%v), want %v", what, nr.Node, nr.Outcome, nr.Err, want)
				}
			}
		}
		return notAwaited
	}
	for g := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := "lock:g" + string(rune('A'+g))
			val := "rl1.g" + string(rune('A'+g))
			for i := range 60 {
				switch i % 4 {
				case 0:
					check("SET on a hash", m.wireRound(ctx, opAcquire, "lock:hash", wireSet, val, "", 60000), OutcomeForeign, nil)
				case 1:
					check("release on a hash", m.wireRound(ctx, opRelease, "lock:hash", wireRelease, val, "", 0), OutcomeError, nil)
				case 2:
					check("SET on a held key", m.wireRound(ctx, opAcquire, "lock:theirs", wireSet, val, "", 60000), OutcomeForeign, nil)
				}
				skip := check("SET", m.wireRound(ctx, opAcquire, key, wireSet, val, "", 60000), OutcomeOK, nil)
				check("extend", m.wireRound(ctx, opExtend, key, wireExtend, val, "", 60000), OutcomeOK, skip)
				check("release", m.wireRound(ctx, opRelease, key, wireRelease, val, "", 0), OutcomeOK, skip)
			}
		}()
	}
	wg.Wait()
	close(stop)
	nemesis.Wait()
	assert.Zero(t, bad.Load(), "wrong outcomes")
	for _, sv := range c.Servers {
		assert.Zero(t, st.Dropped(sv.Name), "connections to %s dropped", sv.Name)
	}

	// OOM: a master over maxmemory refuses SET and the scripts with an error
	// reply; the next command on the connection reads its own reply.
	sv := c.Servers[0].Client()
	require.NoError(t, sv.ConfigSet(ctx, "maxmemory", "1").Err())
	rep := m.wireRound(ctx, opAcquire, "lock:oom", wireSet, "rl1.oom", "", 60000)
	assert.Equal(t, []Outcome{OutcomeError, OutcomeOK, OutcomeOK}, outcomes(rep))
	assert.Contains(t, rep.Nodes[0].Err.Error(), "OOM")
	require.NoError(t, sv.ConfigSet(ctx, "maxmemory", "0").Err())
	rep = m.wireRound(ctx, opAcquire, "lock:theirs", wireSet, "rl1.x", "", 60000)
	assert.Equal(t, []Outcome{OutcomeForeign, OutcomeForeign, OutcomeForeign}, outcomes(rep))
}

// A master restarted (empty) while hundreds of commands are in flight on its
// connection: with the restart quarantine on, no vote of the new process counts
// before its quarantine ends, whichever connection (old, dying; new, dialled by
// the writer goroutine while rounds queue behind it) carried it.
func TestAttackPipeRestartInFlightIsQuarantined(t *testing.T) {
	c := redistest.Start(t, 3, redistest.Options{})
	const window = 2 * time.Second
	time.Sleep(window + 1100*time.Millisecond) // the masters are older than the window
	m := managerFor(t, c, WithRestartQuarantine(window), WithNodeTimeout(500*time.Millisecond))
	ctx := context.Background()
	require.Equal(t, 3, m.wireRound(ctx, opAcquire, "lock:warm", wireSet, "rl1.warm", "", 60000).Votes)
	require.Empty(t, m.quarantineEnds())

	var restarted atomic.Int64 // UnixNano when b was killed
	var wg sync.WaitGroup
	var bad atomic.Int32
	end := time.Now().Add(1500 * time.Millisecond)
	for g := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := "rq" + string(rune('A'+g))
			for time.Now().Before(end) {
				s := time.Now()
				l, err := m.TryAcquire(ctx, name, time.Minute)
				if err != nil {
					continue
				}
				rep := l.Votes()
				if r := restarted.Load(); r != 0 && s.UnixNano() > r && rep.Nodes[1].Outcome == OutcomeOK {
					if bad.Add(1) <= 3 {
						t.Errorf("b's vote counted %v after its restart (quarantine %v)", time.Duration(s.UnixNano()-r), window)
					}
				}
				_ = l.Release(ctx)
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	// The old process answers until it is dead: a round begun after the kill was
	// sent but before it took effect may count its vote. The clock starts once
	// the process is gone, then the master comes back empty.
	c.Servers[1].Kill()
	restarted.Store(time.Now().UnixNano())
	c.Servers[1].Restart(false)
	wg.Wait()
	assert.Contains(t, m.quarantineEnds(), "b")
	assert.Zero(t, bad.Load())
}

// A thousand goroutines, each on a key of its own, with call deadlines of
// 100µs-2ms: rounds give up on written commands all the time, and late replies
// are drained between live ones. Every goroutine's key is written by it alone, so
// a misread shows: a vote where the key does not hold the round's value, or a
// holder that is not one of the goroutine's own values.
// It runs against both transports (wire.Rounder): the pipelined one and go-redis.
func TestAttackPipeThousandTinyDeadlines(t *testing.T) {
	for _, path := range []string{"wire", "go-redis"} {
		t.Run(path, func(t *testing.T) { attackThousandTinyDeadlines(t, path == "go-redis") })
	}
}

func attackThousandTinyDeadlines(t *testing.T, goRedis bool) {
	st := newConnStats()
	c, m := testCluster(t, 3, WithNodeTimeout(50*time.Millisecond), WithObserver(st))
	if goRedis {
		useGoRedis(m)
	}
	ctx := context.Background()
	admins := make([]*redis.Client, len(c.Servers))
	for i, s := range c.Servers {
		admins[i] = redis.NewClient(&redis.Options{Addr: s.Addr(), PoolSize: 64})
		t.Cleanup(func() { _ = admins[i].Close() })
	}
	var wg sync.WaitGroup
	var bad, votes, foreign atomic.Int32
	// The storm lasts 1.5 s, and goes on (up to 20 s) until a round has voted:
	// on a loaded machine under the race detector every round of the first 1.5 s
	// timed out once (go-redis: "0 votes"), and the checks were vacuous.
	end, hard := time.Now().Add(1500*time.Millisecond), time.Now().Add(20*time.Second)
	going := func() bool {
		now := time.Now()
		return now.Before(end) || votes.Load() == 0 && now.Before(hard)
	}
	for g := range 1000 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			key := fmt.Sprintf("lock:t%d", g)
			prefix := fmt.Sprintf("rl1.t%d.", g)
			for i := 0; going(); i++ {
				value := prefix + strconv.Itoa(i)
				// Deadlines of 0.1-2 ms, and every tenth round 50 ms, so that
				// some rounds vote however busy the machine is and the checks
				// below are never vacuous.
				deadline := time.Duration(100+rng.IntN(1900)) * time.Microsecond
				if i%10 == 9 {
					deadline = 50 * time.Millisecond
				}
				cctx, cancel := context.WithTimeout(ctx, deadline)
				rep := m.wireRound(cctx, opAcquire, key, wireSet, value, "", 60000)
				cancel()
				for j, nr := range rep.Nodes {
					switch nr.Outcome {
					case OutcomeOK:
						votes.Add(1)
						if v, err := admins[j].Get(ctx, key).Result(); err == nil && v != value {
							if bad.Add(1) <= 5 {
								t.Errorf("%s: vote on %s, but the key holds %q", value, nr.Node, v)
							}
						}
					case OutcomeForeign:
						foreign.Add(1)
						if !strings.HasPrefix(nr.holder, prefix) {
							if bad.Add(1) <= 5 {
								t.Errorf("%s: holder on %s is %q, not one of ours", value, nr.Node, nr.holder)
							}
						}
					}
				}
				for _, a := range admins {
					_ = a.Del(ctx, key).Err()
				}
			}
		}()
	}
	wg.Wait()
	drained := st.Late("")
	t.Logf("%d votes, %d foreign, %d late replies drained", votes.Load(), foreign.Load(), drained)
	assert.Zero(t, bad.Load())
	assert.Positive(t, votes.Load())
}

// A release cancelled while its EVALSHA was answered NOSCRIPT and its EVAL is
// on the way: the round returns at once, the EVAL's late reply is drained, and
// the next round on the connection reads its own reply. The cancel comes once the
// EVALs have taken effect on every master (read there directly) and their replies
// are still on their way back (50 ms); a fixed 30 ms, between a NOSCRIPT reply due
// at 20 ms and the EVAL's, came before the EVAL was written when the race detector
// and the load delayed the client (the keys were still there).
func TestAttackPipeCancelDuringNoscriptResubmit(t *testing.T) {
	s := newScen(t, mutants{}, 3)
	cl := s.client("A", WithNodeTimeout(time.Second))
	m := cl.m
	st := s.stats
	ctx := context.Background()
	require.Equal(t, 3, m.wireRound(ctx, opAcquire, "lock:ns", wireSet, "rl1.ns", "", 60000).Votes)
	for _, sv := range s.c.Servers {
		require.NoError(t, sv.Client().ScriptFlush(ctx).Err())
		require.NoError(t, sv.Client().Set(ctx, "lock:theirs", "rl1.theirs", time.Minute).Err())
	}
	cl.net(func(p *faults.Proxy) { p.SetLatency(0, 50*time.Millisecond) })
	cctx, cancel := context.WithCancel(ctx)
	cancelledAt := make(chan time.Time, 1)
	go func() {
		defer cancel()
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if len(keysOn(t, s.c, "lock:ns")) == 0 {
				break
			}
		}
		cancelledAt <- time.Now()
	}()
	rep := m.wireRound(cctx, opRelease, "lock:ns", wireRelease, "rl1.ns", "", 0)
	returned := time.Now()
	cancelled := <-cancelledAt
	assert.Less(t, returned.Sub(cancelled), 5*time.Millisecond)
	for _, nr := range rep.Nodes {
		assert.ErrorIs(t, nr.Err, context.Canceled)
	}
	rep = m.wireRound(ctx, opAcquire, "lock:theirs", wireSet, "rl1.next", "", 60000)
	assert.Equal(t, []Outcome{OutcomeForeign, OutcomeForeign, OutcomeForeign}, outcomes(rep))
	drained, dropped := st.Late(""), st.Dropped("")
	assert.EqualValues(t, 3, drained, "the EVALs' late replies")
	assert.Zero(t, dropped)
	assert.Empty(t, keysOn(t, s.c, "lock:ns"), "the EVALs took effect")
}
