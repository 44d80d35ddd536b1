package wire_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/faults"
	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/internal/wire"
)

// lingerAttack is one row of TestAttackWhileThePumpWaitsForAWave: what the
// rounds send and what goes wrong while the pumps wait for their waves.
type lingerAttack struct {
	name   string
	script bool // the rounds run echoScript (EVALSHA, EVAL after NOSCRIPT)
	quorum bool // the rounds end at a quorum of two (as acquisitions do)
	cancel bool // a third of the rounds are cancelled 0-600 µs after they start
	close  bool // Close comes while the rounds run
	// fault, when set, injects one fault and returns when it is over; ends
	// when ctx is done.
	fault func(ctx context.Context, rng *rand.Rand, c *redistest.Cluster, px *faults.Proxy)
	// errorStat, when set, is an error the masters must have answered
	// (INFO errorstats): the fault did reach the rounds.
	errorStat string
}

// TestAttackWhileThePumpWaitsForAWave: 32 goroutines send rounds a few hundred
// microseconds apart to three masters (two direct, one 0.5 ms away behind a
// proxy), so that the pumps wait for waves that trickle in, while rounds are
// cancelled at random instants of the wait, the masters' scripts are flushed
// (NOSCRIPT, the EVAL queued again), a master is frozen (SIGSTOP) or cut off
// (blackhole), or the pipes are closed. Every reply a round gets is its own
// command's; every round returns within its node timeout, and a cancelled one
// soon after its cancellation (bounds generous for a loaded machine: a hang
// shows as seconds); once the faults end every master answers again; Close
// returns at once and leaves no goroutine behind.
func TestAttackWhileThePumpWaitsForAWave(t *testing.T) {
	const timeout = 50 * time.Millisecond
	const slack = 250 * time.Millisecond
	run := 600 * time.Millisecond
	c := redistest.Start(t, 3, redistest.Options{})
	px := faults.NewProxy(t, c.Servers[2].Addr())
	masters := []wire.Master{{Addr: c.Servers[0].Addr()}, {Addr: c.Servers[1].Addr()}, {Addr: px.Addr()}}
	far := func() { px.Heal(); px.SetLatency(500*time.Microsecond, 0) }
	pause := func(ctx context.Context, rng *rand.Rand) bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(time.Duration(5+rng.IntN(75)) * time.Millisecond):
			return true
		}
	}
	for _, tc := range []lingerAttack{
		{name: "cancelled mid-wave", cancel: true},
		{name: "scripts flushed", script: true, cancel: true, errorStat: "errorstat_NOSCRIPT",
			fault: func(ctx context.Context, rng *rand.Rand, c *redistest.Cluster, _ *faults.Proxy) {
				_ = c.Servers[rng.IntN(3)].Client().ScriptFlush(ctx).Err()
				pause(ctx, rng)
			}},
		{name: "a master frozen", quorum: true, cancel: true,
			fault: func(ctx context.Context, rng *rand.Rand, c *redistest.Cluster, _ *faults.Proxy) {
				faults.Pause(c.Servers[rng.IntN(2)], time.Duration(5+rng.IntN(75))*time.Millisecond)
				pause(ctx, rng)
			}},
		{name: "the far master cut off", quorum: true, script: true,
			fault: func(ctx context.Context, rng *rand.Rand, _ *redistest.Cluster, px *faults.Proxy) {
				px.Blackhole()
				pause(ctx, rng)
				far()
				pause(ctx, rng)
			}},
		{name: "closed mid-wave", cancel: true, close: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			far()
			var dropped atomic.Int64
			ps := wire.New(masters, wire.Config{Timeout: timeout, Observe: func(e wire.Event) {
				if e.Kind == wire.EventDropped {
					dropped.Add(1)
				}
			}})
			closed := false
			t.Cleanup(func() {
				if !closed {
					_ = ps.Close()
				}
			})
			ctx, stop := context.WithTimeout(context.Background(), run)
			defer stop()
			var nemesis sync.WaitGroup
			var injected atomic.Int64
			if tc.fault != nil {
				nemesis.Go(func() {
					rng := rand.New(rand.NewPCG(1, 1))
					for ctx.Err() == nil {
						tc.fault(ctx, rng, c, px)
						injected.Add(1)
					}
				})
			}
			var closeTook atomic.Int64
			if tc.close {
				nemesis.Go(func() {
					time.Sleep(run / 2)
					t0 := time.Now()
					_ = ps.Close()
					closeTook.Store(int64(time.Since(t0)))
				})
			}
			var rounds, answered, cancelled atomic.Int64
			var mu sync.Mutex
			var problems []string
			report := func(format string, args ...any) {
				mu.Lock()
				defer mu.Unlock()
				if len(problems) < 10 {
					problems = append(problems, fmt.Sprintf(format, args...))
				}
			}
			var wg sync.WaitGroup
			for g := range 32 {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(g), 2))
					out := make([]wire.Result, len(masters))
					for i := 0; ctx.Err() == nil; i++ {
						if d := rng.IntN(400); d > 100 {
							time.Sleep(time.Duration(d) * time.Microsecond)
						}
						v := fmt.Sprintf("g%d.%d", g, i)
						cmd := &wire.Cmd{Args: []string{"ECHO", v}, Want: "$"}
						if tc.script {
							cmd = &wire.Cmd{Script: echoScript, Args: []string{v}, Want: "$"}
						}
						if tc.quorum {
							cmd.Quorum = 2
							cmd.Granted = func(_ int, r *wire.Result) bool { return r.Str == v }
						}
						rctx, cancel := context.WithCancel(context.Background())
						var cancelledAt atomic.Int64
						if tc.cancel && rng.IntN(3) == 0 {
							time.AfterFunc(time.Duration(rng.IntN(600))*time.Microsecond, func() {
								cancelledAt.Store(time.Now().UnixNano())
								cancel()
							})
						}
						t0 := time.Now()
						ps.Round(rctx, cmd, out)
						end := time.Now()
						cancel()
						rounds.Add(1)
						if over := end.Sub(t0) - timeout; over > slack {
							report("round %s took %v", v, end.Sub(t0))
						}
						if at := cancelledAt.Load(); at != 0 {
							cancelled.Add(1)
							if after := end.Sub(time.Unix(0, at)); after > slack {
								report("round %s returned %v after its cancellation", v, after)
							}
						}
						closedNow := false
						for m, res := range out {
							switch {
							case res.Err == nil && res.Str == v:
								answered.Add(1)
							case res.Err == nil:
								report("master %d answered %q to %s", m, res.Str, v)
							case tc.close && errors.Is(res.Err, wire.ErrClosed):
								closedNow = true
							}
						}
						if closedNow {
							return
						}
					}
				})
			}
			wg.Wait()
			stop()
			nemesis.Wait()
			far()
			for _, s := range c.Servers {
				s.Cont()
			}
			t.Logf("%d rounds (%d cancelled), %d replies their own, %d faults injected, %d connections dropped",
				rounds.Load(), cancelled.Load(), answered.Load(), injected.Load(), dropped.Load())
			if tc.errorStat != "" {
				n := 0
				for _, s := range c.Servers {
					info, err := s.Client().Info(context.Background(), "errorstats").Result()
					require.NoError(t, err)
					n += strings.Count(info, tc.errorStat+":")
				}
				assert.Positive(t, n, "no master answered %s", tc.errorStat)
			}
			assert.Empty(t, problems)
			assert.Positive(t, answered.Load())
			if tc.close {
				assert.Less(t, time.Duration(closeTook.Load()), time.Second, "Close waited")
			} else {
				// Every master answers again once the faults end.
				out := make([]wire.Result, len(masters))
				ok := func() bool {
					ps.Round(context.Background(), &wire.Cmd{Args: []string{"ECHO", "after"}, Want: "$"}, out)
					return !slices.ContainsFunc(out, func(r wire.Result) bool { return r.Err != nil || r.Str != "after" })
				}
				require.Eventually(t, ok, 2*time.Second, 10*time.Millisecond, "after the faults: %+v", out)
			}
			closed = true
			require.NoError(t, ps.Close())
			deadline := time.Now().Add(2 * time.Second)
			for pipeGoroutines() > 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			assert.Zero(t, pipeGoroutines(), "goroutines of the pipes left after Close")
		})
	}
}
