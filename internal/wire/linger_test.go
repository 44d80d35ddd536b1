package wire_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/internal/wire"
)

// TestWavesThatTrickleAreAllAnswered: under contention the pump waits for the
// rest of a wave before it writes the next batch (a silence gap at a time, a cap
// in all). Rounds that come back at random moments (0-300 µs apart, callers
// leaving and coming back, waves never as big as the last) are each answered with
// their own reply, and none waits anywhere near its node timeout. (A quarter of
// the waits here end on their timer as a round arrives, which leaves a wake-up
// behind for the next wait.)
func TestWavesThatTrickleAreAllAnswered(t *testing.T) {
	c := redistest.Start(t, 2, redistest.Options{})
	const timeout = 2 * time.Second
	ps := wire.New([]wire.Master{{Addr: c.Servers[0].Addr()}, {Addr: c.Servers[1].Addr()}},
		wire.Config{Timeout: timeout})
	t.Cleanup(func() { _ = ps.Close() })
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 64)
	for g := range 64 {
		wg.Go(func() {
			out := make([]wire.Result, 2)
			for i := range 150 {
				if d := rand.N(300); d > 150 {
					time.Sleep(time.Duration(d) * time.Microsecond)
				}
				v := fmt.Sprintf("g%d.%d", g, i)
				t0 := time.Now()
				ps.Round(ctx, &wire.Cmd{Args: []string{"ECHO", v}, Want: "$"}, out)
				if took := time.Since(t0); took > timeout/2 {
					errs[g] = fmt.Errorf("round %s took %v", v, took)
					return
				}
				for m, res := range out {
					if res.Err != nil || res.Str != v {
						errs[g] = fmt.Errorf("round %s on master %d: %q, %v", v, m, res.Str, res.Err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	for g, err := range errs {
		require.NoError(t, err, "goroutine %d", g)
	}
}

// TestCloseWhileThePumpWaitsForAWave: Close ends the pump's wait for a wave at
// once, and the rounds queued meanwhile end (answered, or ErrClosed), never
// holding Close or the caller past a moment.
func TestCloseWhileThePumpWaitsForAWave(t *testing.T) {
	c := redistest.Start(t, 1, redistest.Options{})
	ctx := context.Background()
	for attempt := range 40 {
		ps := wire.New([]wire.Master{{Addr: c.Servers[0].Addr()}}, wire.Config{Timeout: 5 * time.Second})
		var wg sync.WaitGroup
		for g := range 32 { // a batch of many: the next one waits for its wave
			wg.Go(func() {
				out := make([]wire.Result, 1)
				for range 3 {
					ps.Round(ctx, &wire.Cmd{Args: []string{"ECHO", fmt.Sprint(g)}, Want: "$"}, out)
				}
			})
		}
		wg.Wait()
		done := make(chan wire.Result, 1)
		go func() {
			out := make([]wire.Result, 1)
			ps.Round(ctx, &wire.Cmd{Args: []string{"ECHO", "lone"}, Want: "$"}, out)
			done <- out[0]
		}()
		time.Sleep(time.Duration(rand.N(100)) * time.Microsecond)
		t0 := time.Now()
		require.NoError(t, ps.Close())
		require.Less(t, time.Since(t0), time.Second, "attempt %d: Close waited", attempt)
		select {
		case res := <-done:
			if res.Err != nil {
				require.True(t, errors.Is(res.Err, wire.ErrClosed), "attempt %d: %v", attempt, res.Err)
			} else {
				require.Equal(t, "lone", res.Str)
			}
		case <-time.After(time.Second):
			t.Fatalf("attempt %d: the round queued before Close never returned", attempt)
		}
	}
}
