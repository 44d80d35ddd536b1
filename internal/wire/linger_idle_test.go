package wire_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/internal/wire"
)

// TestBugLoneRoundAfterABurstWaitsAMillisecond: after a batch of many, the pump
// waits for the rest of the next wave, a silence gap of 20-200 µs at most; a
// lone round that comes once the burst is over is then held that long, and no
// longer. The wait slept on a timer, and a timer shorter than a millisecond
// lasts a millisecond when nothing else runs in the process (the runtime's
// network poller sleeps in whole milliseconds): every lone round after a burst
// came back a millisecond late, ten times a round on loopback. Compared here
// with a lone round at rest, the round right after it, so that a loaded machine
// slows both.
func TestBugLoneRoundAfterABurstWaitsAMillisecond(t *testing.T) {
	for _, n := range []int{1, 3} {
		t.Run(fmt.Sprintf("%d masters", n), func(t *testing.T) {
			c := redistest.Start(t, n, redistest.Options{})
			var masters []wire.Master
			for _, s := range c.Servers {
				masters = append(masters, wire.Master{Addr: s.Addr()})
			}
			ps := wire.New(masters, wire.Config{Timeout: 2 * time.Second})
			t.Cleanup(func() { _ = ps.Close() })
			ctx := context.Background()
			round := func(args ...string) time.Duration {
				out := make([]wire.Result, n)
				t0 := time.Now()
				ps.Round(ctx, &wire.Cmd{Args: args, Want: "$+"}, out)
				took := time.Since(t0)
				for m, res := range out {
					require.NoError(t, res.Err, "%v on master %d", args, m)
					if args[0] == "ECHO" {
						require.Equal(t, args[1], res.Str, "master %d", m)
					}
				}
				return took
			}
			var extra []time.Duration
			for trial := range 25 {
				// A batch of 16: ECHOs queued behind a DEBUG SLEEP leave together.
				var wg sync.WaitGroup
				wg.Go(func() { round("DEBUG", "SLEEP", "0.01") })
				time.Sleep(time.Millisecond)
				for g := range 16 {
					wg.Go(func() { round("ECHO", fmt.Sprintf("t%d.g%d", trial, g)) })
				}
				wg.Wait()
				time.Sleep(3 * time.Millisecond) // the burst is over
				after := round("ECHO", fmt.Sprintf("t%d.lone", trial))
				rest := round("ECHO", fmt.Sprintf("t%d.rest", trial))
				extra = append(extra, after-rest)
			}
			// The bug made every lone round a millisecond late; the machine's
			// noise goes both ways (-2.5 to +1.6 ms in a CI run beside the e2e
			// tests, where 6 of 25 were more than 0.7 ms late and the median
			// 0.26 ms). The median of the 25 is what tells them apart.
			slices.Sort(extra)
			require.Less(t, extra[len(extra)/2], 700*time.Microsecond,
				"the median lone round after a burst 0.7 ms slower than one at rest; all their extra times, sorted: %v", extra)
		})
	}
}
