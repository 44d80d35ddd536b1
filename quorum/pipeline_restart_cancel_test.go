package quorum

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// A lone client (one goroutine: its commands go out alone and it reads its own
// replies, or the pump does after a pause) whose master b restarts empty: with the
// restart quarantine on, no vote of b counts before the quarantine ends, whether
// the next command finds the dead connection within a moment of the last one or
// after a pause.
func TestAttackPipeLoneRoundsAfterRestartAreQuarantined(t *testing.T) {
	c := redistest.Start(t, 3, redistest.Options{})
	const window = time.Second
	time.Sleep(window + 1100*time.Millisecond) // the masters are older than the window
	m := managerFor(t, c, WithRestartQuarantine(window), WithNodeTimeout(300*time.Millisecond))
	ctx := context.Background()
	require.Equal(t, 3, m.wireRound(ctx, opAcquire, "lock:warm", wireSet, "rl1.warm", "", 60000).Votes)
	require.Empty(t, m.quarantineEnds())

	var restarted atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(200 * time.Millisecond)
		restarted.Store(time.Now().UnixNano())
		c.Servers[1].Restart(false)
	}()
	rng := rand.New(rand.NewPCG(4, 4))
	bad, rounds := 0, 0
	for end := time.Now().Add(900 * time.Millisecond); time.Now().Before(end); rounds++ {
		s := time.Now()
		value := fmt.Sprintf("rl1.lone%d", rounds)
		rep := m.wireRound(ctx, opAcquire, "lock:lone", wireSet, value, "", 60000)
		m.unquarantinedVotes(rep, time.Now())
		if r := restarted.Load(); r != 0 && s.UnixNano() > r && rep.Nodes[1].Outcome == OutcomeOK {
			bad++
			if bad <= 3 {
				t.Errorf("b's vote counted %v after its restart (quarantine %v)", time.Duration(s.UnixNano()-r), window)
			}
		}
		m.wireRound(ctx, opRelease, "lock:lone", wireRelease, value, "", 0)
		time.Sleep(time.Duration(rng.IntN(3)*8) * time.Millisecond) // at once, or past a pause
	}
	<-done
	t.Logf("%d rounds", rounds)
	assert.Contains(t, m.quarantineEnds(), "b")
}

// 32 goroutines contend for three names with call deadlines of 0.2-20ms, a third of
// the calls cancelled at a random instant, while master a is frozen now and then;
// every vote a round counts is checked on its master (a vote read from another
// command's reply shows as a key holding another value), then the Manager is
// closed in the middle of it all: every call returns promptly, and the pipes'
// goroutines are gone.
func TestAttackPipeRandomCancelVotesCheckedThenClose(t *testing.T) {
	c := redistest.Start(t, 3, redistest.Options{})
	before := pipeGoroutines()
	nodes := make([]Node, len(c.Servers))
	for i, s := range c.Servers {
		nodes[i] = Node{Name: s.Name, Addr: s.Addr()}
	}
	m, err := New(nodes, WithRestartQuarantine(0), WithNodeTimeout(20*time.Millisecond), WithRetry(1, time.Millisecond, time.Millisecond))
	require.NoError(t, err)
	admins := make([]*redis.Client, len(c.Servers))
	for i, s := range c.Servers {
		admins[i] = redis.NewClient(&redis.Options{Addr: s.Addr(), PoolSize: 64, MaxRetries: -1, ReadTimeout: 200 * time.Millisecond})
		t.Cleanup(func() { _ = admins[i].Close() })
	}
	stop := make(chan struct{})
	var nemesis sync.WaitGroup
	nemesis.Go(func() {
		rng := rand.New(rand.NewPCG(5, 5))
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(20+rng.IntN(60)) * time.Millisecond):
			}
			c.Servers[0].Stop()
			time.Sleep(time.Duration(5+rng.IntN(40)) * time.Millisecond)
			c.Servers[0].Cont()
		}
	})
	var wg sync.WaitGroup
	var closing atomic.Bool
	var closedAt atomic.Int64
	var bad, held, votes atomic.Int32
	var lastReturn atomic.Int64
	for g := range 32 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 11))
			name := fmt.Sprintf("rc%d", g%3)
			for i := 0; ; i++ {
				if closing.Load() && time.Since(time.Unix(0, closedAt.Load())) > 50*time.Millisecond {
					return
				}
				cctx, cancel := context.WithTimeout(context.Background(), time.Duration(200+rng.IntN(19800))*time.Microsecond)
				if rng.IntN(3) == 0 {
					time.AfterFunc(time.Duration(rng.IntN(3000))*time.Microsecond, cancel)
				}
				l, err := m.TryAcquire(cctx, name, time.Minute)
				cancel()
				lastReturn.Store(time.Now().UnixNano())
				if err != nil {
					if closing.Load() && strings.Contains(err.Error(), "manager closed") {
						return
					}
					continue
				}
				held.Add(1)
				rep := l.Votes()
				for j, nr := range rep.Nodes {
					if nr.Outcome != OutcomeOK {
						continue
					}
					votes.Add(1)
					v, err := admins[j].Get(context.Background(), m.Key(name)).Result()
					if err == nil && v != l.Token() {
						if bad.Add(1) <= 5 {
							t.Errorf("%s: a vote counted on %s, but the key holds %q", l.Token(), nr.Node, v)
						}
					}
				}
				rctx, rcancel := context.WithTimeout(context.Background(), time.Duration(200+rng.IntN(19800))*time.Microsecond)
				if rng.IntN(3) == 0 {
					time.AfterFunc(time.Duration(rng.IntN(3000))*time.Microsecond, rcancel)
				}
				_ = l.Release(rctx)
				rcancel()
				for _, a := range admins { // what a cancelled release left
					_ = a.Eval(context.Background(), "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0", []string{m.Key(name)}, l.Token()).Err()
				}
			}
		})
	}
	// At least 1.5 s, and until some acquisitions succeeded (a loaded machine can
	// fail every call of the first seconds by its 0.2-20 ms deadline), at most 10 s.
	time.Sleep(1500 * time.Millisecond)
	for until := time.Now().Add(8500 * time.Millisecond); held.Load() < 10 && time.Now().Before(until); {
		time.Sleep(50 * time.Millisecond)
	}
	closedAt.Store(time.Now().UnixNano())
	closing.Store(true)
	start := time.Now()
	require.NoError(t, m.Close())
	closeTook := time.Since(start)
	waited := make(chan struct{})
	go func() { wg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(5 * time.Second):
		t.Fatal("calls still running 5s after Close")
	}
	close(stop)
	nemesis.Wait()
	c.Servers[0].Cont()
	t.Logf("%d acquisitions, %d votes checked; Close took %v, the last call returned %v after it",
		held.Load(), votes.Load(), closeTook, time.Duration(lastReturn.Load()-closedAt.Load()))
	assert.Zero(t, bad.Load(), "votes read from another command's reply")
	assert.Positive(t, held.Load())
	assert.Less(t, closeTook, 500*time.Millisecond, "Close")
	deadline := time.Now().Add(2 * time.Second)
	for pipeGoroutines() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	assert.Equal(t, before, pipeGoroutines(), "pipe goroutines left after Close")
}
