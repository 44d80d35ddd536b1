package wire_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/wire"
)

// TestBugTrickleHoldsACommandTwiceTheCap: the pump waits for the rest of a wave
// 400 µs at most in all, however the wave trickles in. A master that answers
// each batch 2 ms after it reads it (a silence gap of 200 µs; a fake, which
// tells when each command reached it) answers a batch of 24; then rounds come
// one every 100 µs, never the 24 of the wave. The first of them waited out the
// cap twice (0.8 ms): once while the pump waited for the wave with nothing
// queued, and again once something was.
func TestBugTrickleHoldsACommandTwiceTheCap(t *testing.T) {
	var mu sync.Mutex
	arrived := map[string]time.Time{}
	newBatch := true
	f := newFakeMaster(t, func(_ int, args []string, last bool) string {
		now := time.Now()
		mu.Lock()
		arrived[args[1]] = now
		first := newBatch
		newBatch = last
		mu.Unlock()
		if first {
			time.Sleep(2 * time.Millisecond)
		}
		return bulk(args[1])
	})
	var submitted sync.Map
	ps := wire.New([]wire.Master{{Addr: f.addr()}}, wire.Config{Timeout: 2 * time.Second,
		Submitted: func(_ int, cmd *wire.Cmd) { submitted.Store(cmd.Args[1], time.Now()) }})
	t.Cleanup(func() { _ = ps.Close() })
	echo := func(v string) {
		out := make([]wire.Result, 1)
		ps.Round(context.Background(), &wire.Cmd{Args: []string{"ECHO", v}, Want: "$"}, out)
		require.NoError(t, out[0].Err, v)
		require.Equal(t, v, out[0].Str)
	}
	var held []time.Duration
	for trial := range 12 {
		var burst sync.WaitGroup
		for g := range 25 {
			burst.Go(func() { echo(fmt.Sprintf("t%d.b%d", trial, g)) })
		}
		burst.Wait()
		var trickle sync.WaitGroup
		next := time.Now()
		for i := range 12 {
			time.Sleep(time.Until(next))
			next = next.Add(100 * time.Microsecond)
			trickle.Go(func() { echo(fmt.Sprintf("t%d.r%d", trial, i)) })
		}
		trickle.Wait()
		v := fmt.Sprintf("t%d.r0", trial)
		at, _ := submitted.Load(v)
		mu.Lock()
		held = append(held, arrived[v].Sub(at.(time.Time)))
		mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
	slices.Sort(held)
	t.Logf("the first round of each trickle, from its submission to the master (sorted): %v", held)
	require.Less(t, held[len(held)/2], 650*time.Microsecond, "held past the cap")
}
