package wire_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/internal/wire"
)

// echoScript returns its argument: a round's reply names the command it answers.
var echoScript = wire.NewScript("return ARGV[1]")

// TestAttackRoundsAtAQuorumNeverTakeAnotherCommandsReply: goroutines run rounds
// that end at a quorum (ECHO, or a script that echoes, its cache flushed now and
// then so that EVALSHA meets NOSCRIPT mid-round), some cancelled at a random
// moment, while masters stall (SIGSTOP for a few milliseconds) at random. Every
// reply a round gets is its own command's.
func TestAttackRoundsAtAQuorumNeverTakeAnotherCommandsReply(t *testing.T) {
	c := redistest.Start(t, 5, redistest.Options{})
	masters := make([]wire.Master, 5)
	for i, s := range c.Servers {
		masters[i] = wire.Master{Addr: s.Addr()}
	}
	ps := wire.New(masters, wire.Config{Timeout: 300 * time.Millisecond})
	t.Cleanup(func() { _ = ps.Close() })
	stop := make(chan struct{})
	var faults sync.WaitGroup
	faults.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			s := c.Servers[rand.IntN(5)]
			if rand.IntN(3) == 0 {
				_ = s.Client().ScriptFlush(context.Background()).Err()
			} else {
				s.Stop()
				time.Sleep(time.Duration(1+rand.IntN(20)) * time.Millisecond)
				s.Cont()
			}
			time.Sleep(time.Duration(rand.IntN(10)) * time.Millisecond)
		}
	})
	var rounds, early, wrong atomic.Int64
	var wg sync.WaitGroup
	end := time.Now().Add(3 * time.Second)
	for g := range 16 {
		wg.Go(func() {
			out := make([]wire.Result, 5)
			for n := 0; time.Now().Before(end); n++ {
				payload := strconv.Itoa(g) + "." + strconv.Itoa(n)
				cmd := &wire.Cmd{Args: []string{"ECHO", payload}, Want: "$", Granted: echoed, Quorum: 3}
				if n%2 == 1 {
					cmd = &wire.Cmd{Script: echoScript, Args: []string{payload}, Want: "$", Granted: echoed, Quorum: 3}
				}
				ctx, cancel := context.WithCancel(context.Background())
				if n%5 == 0 {
					time.AfterFunc(time.Duration(rand.IntN(3000))*time.Microsecond, cancel)
				}
				ps.Round(ctx, cmd, out)
				cancel()
				rounds.Add(1)
				for i, r := range out {
					if r.Err == nil && r.Str != payload {
						wrong.Add(1)
						t.Errorf("round %s: master %d answered %q", payload, i, r.Str)
					}
					if assert.ObjectsAreEqual(r.Err, wire.ErrNotAwaited) {
						early.Add(1)
					}
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	faults.Wait()
	for _, s := range c.Servers {
		s.Cont()
	}
	t.Logf("%d rounds, %d masters not awaited", rounds.Load(), early.Load())
	require.Zero(t, wrong.Load())
	require.Positive(t, early.Load(), "some rounds ended at a quorum")
}
