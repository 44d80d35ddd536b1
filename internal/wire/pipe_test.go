package wire_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/internal/wire"
)

// TestCommandsJoiningALoneCommandAreWritten: a round that finds a pipe idle writes
// its command alone, after looking at the idle connection (a system call, with
// the pipe's lock released); commands queued meanwhile join its batch and must be
// written with it. (They were once encoded without the lone command, which then
// never got a reply: a 250 ms stall and a dropped connection.) Bursts of rounds
// after idle pauses, every one answered.
func TestCommandsJoiningALoneCommandAreWritten(t *testing.T) {
	c := redistest.Start(t, 1, redistest.Options{})
	ps := wire.New([]wire.Master{{Addr: c.Servers[0].Addr()}}, wire.Config{Timeout: 2 * time.Second})
	t.Cleanup(func() { _ = ps.Close() })
	ctx := context.Background()
	for burst := range 60 {
		time.Sleep(12 * time.Millisecond) // idle past the idle check's threshold
		start := make(chan struct{})
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for g := range 8 {
			wg.Go(func() {
				v := fmt.Sprintf("b%d.g%d", burst, g)
				out := make([]wire.Result, 1)
				<-start
				ps.Round(ctx, &wire.Cmd{Args: []string{"ECHO", v}, Want: "$"}, out)
				switch {
				case out[0].Err != nil:
					errs[g] = out[0].Err
				case out[0].Str != v:
					errs[g] = fmt.Errorf("ECHO %s answered %q", v, out[0].Str)
				}
			})
		}
		close(start)
		wg.Wait()
		for g, err := range errs {
			require.NoError(t, err, "burst %d, round %d", burst, g)
		}
	}
}

// TestFrozenMasterMidBatch: a master frozen (SIGSTOP) while a batch is in flight
// holds up what queued behind that batch; every round still returns within its
// deadline plus scheduling, never reading a reply as another command's, and once
// the master is thawed the pipe answers again (the batch's late replies drained
// or its connection dropped).
func TestFrozenMasterMidBatch(t *testing.T) {
	c := redistest.Start(t, 1, redistest.Options{})
	const timeout = 60 * time.Millisecond
	ps := wire.New([]wire.Master{{Addr: c.Servers[0].Addr()}}, wire.Config{Timeout: timeout})
	t.Cleanup(func() { _ = ps.Close() })
	ctx := context.Background()
	round := func(v string) (wire.Result, time.Duration) {
		out := make([]wire.Result, 1)
		t0 := time.Now()
		ps.Round(ctx, &wire.Cmd{Args: []string{"ECHO", v}, Want: "$"}, out)
		return out[0], time.Since(t0)
	}
	for burst := range 5 {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		errs := make([]error, 32)
		for g := range 32 {
			wg.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					v := fmt.Sprintf("b%d.g%d.%d", burst, g, i)
					res, took := round(v)
					switch {
					case took > timeout+200*time.Millisecond: // generous: a loaded machine
						errs[g] = fmt.Errorf("a round took %v, its deadline %v", took, timeout)
					case res.Err == nil && res.Str != v:
						errs[g] = fmt.Errorf("ECHO %s answered %q", v, res.Str)
					}
				}
			})
		}
		time.Sleep(20 * time.Millisecond)
		c.Servers[0].Stop()
		time.Sleep(2 * timeout)
		c.Servers[0].Cont()
		time.Sleep(20 * time.Millisecond)
		close(stop)
		wg.Wait()
		for g, err := range errs {
			require.NoError(t, err, "burst %d, goroutine %d", burst, g)
		}
		res, _ := round("after")
		if res.Err != nil { // the first after a drop may meet the old connection's end
			res, _ = round("after")
		}
		require.NoError(t, res.Err, "burst %d: the thawed master answers", burst)
		require.Equal(t, "after", res.Str)
	}
}
