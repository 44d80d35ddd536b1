package quorum

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/faults"
	"github.com/redlock/redlock/internal/redistest"
)

// releaseFault is something done to the masters or the holder's links between the
// holder's acquisition and its release; undo runs once the waiter holds the lock.
type releaseFault struct {
	name    string
	partial bool // a master may miss the release: its copy expires
	do      func(t *testing.T, c *redistest.Cluster, holderNet []*faults.Proxy) (undo func())
}

// Faults of the network and of the script cache at a plain lock's release, with a
// plain waiter: the waiter holds the lock within wakeBound of the release (its
// retry delay is 10 s).
func TestAttackShortReleaseWakesAPlainWaiterUnderNetworkFaults(t *testing.T) {
	runReleaseFaults(t, []releaseFault{
		{"none", false, func(*testing.T, *redistest.Cluster, []*faults.Proxy) func() { return nil }},
		{"script flush everywhere (NOSCRIPT, then EVAL)", false, func(t *testing.T, c *redistest.Cluster, _ []*faults.Proxy) func() {
			for _, s := range c.Servers {
				require.NoError(t, s.Client().ScriptFlush(context.Background()).Err())
			}
			return nil
		}},
		{"one master blackholed for the holder", true, func(t *testing.T, _ *redistest.Cluster, p []*faults.Proxy) func() {
			p[1].Blackhole()
			return p[1].Heal
		}},
		{"the holder's replies lost on one master", false, func(t *testing.T, _ *redistest.Cluster, p []*faults.Proxy) func() {
			p[2].LoseReplies()
			return p[2].Heal
		}},
		{"two masters slow for the holder (150 ms)", false, func(t *testing.T, _ *redistest.Cluster, p []*faults.Proxy) func() {
			p[0].SetLatency(150*time.Millisecond, 0)
			p[4].SetLatency(0, 150*time.Millisecond)
			return func() { p[0].Heal(); p[4].Heal() }
		}},
	})
}

// Faults of the masters' processes at a plain lock's release, with a plain waiter.
func TestAttackShortReleaseWakesAPlainWaiterUnderProcessFaults(t *testing.T) {
	runReleaseFaults(t, []releaseFault{
		{"one master paused (SIGSTOP)", true, func(t *testing.T, c *redistest.Cluster, _ []*faults.Proxy) func() {
			c.Servers[0].Stop()
			return c.Servers[0].Cont
		}},
		{"one master restarted without its data", false, func(t *testing.T, c *redistest.Cluster, _ []*faults.Proxy) func() {
			c.Servers[3].Restart(false)
			return nil
		}},
	})
}

func runReleaseFaults(t *testing.T, faultsTable []releaseFault) {
	for _, f := range faultsTable {
		t.Run(f.name, func(t *testing.T) {
			ctx := context.Background()
			c := redistest.Start(t, 5, redistest.Options{})
			proxies := make([]*faults.Proxy, len(c.Servers))
			for i, s := range c.Servers {
				proxies[i] = faults.NewProxy(t, s.Addr())
			}
			holder := managerVia(t, c, func(i int, n *Node) { n.Dialer = proxies[i].Dial }, WithNodeTimeout(300*time.Millisecond))
			waiter := managerFor(t, c, waiterOpts()...)
			// Every master runs release.lua once before the faults: a master that
			// never did answers the release NOSCRIPT, and with its replies lost the
			// holder never learns that it must send the script (the key is then
			// left to its TTL there, as behind a blackhole).
			warm, err := holder.TryAcquire(ctx, "warm", time.Minute)
			require.NoError(t, err)
			require.NoError(t, warm.Release(ctx))
			for round := range 2 {
				l, err := holder.Acquire(ctx, "faulted", time.Minute)
				require.NoError(t, err)
				var undo func()
				d := wakeAfter(t, 300*time.Millisecond, func(ctx context.Context) (*Lock, error) {
					return waiter.Acquire(ctx, "faulted", time.Minute)
				}, func() {
					undo = f.do(t, c, proxies)
					err := l.Release(ctx)
					if err != nil {
						assert.ErrorIs(t, err, ErrPartialRelease, "round %d", round)
					}
					select {
					case <-l.Done():
					default:
						t.Errorf("round %d: Done not closed by Release", round)
					}
				})
				if undo != nil {
					undo()
				}
				t.Logf("round %d: the waiter held the lock %v after the release", round, d)
				assert.Less(t, d, wakeBound, "round %d: the waiter slept its %v retry delay", round, waiterRetry)
			}
			time.Sleep(400 * time.Millisecond) // a paused master's late commands
			checkLeftKeysOf(t, c, "lock:faulted", f.partial)
		})
	}
}
