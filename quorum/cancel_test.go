package quorum

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Contexts cancelled at random points of Acquire (fair or not, with a keep-alive),
// Extend and Release, from several goroutines at once: whatever happens, a lock
// returned is usable until Done, Done fires by Until, nothing is left on any master
// once everything is released and the TTLs passed, and the race detector is quiet.
func TestRandomCancellationLeavesNothingBehind(t *testing.T) {
	t.Parallel()
	seed := seedFor(t)
	c, _ := testCluster(t, 3)
	const ttl = 300 * time.Millisecond
	var wg sync.WaitGroup
	for w := range 4 {
		m := managerFor(t, c, WithNodeTimeout(50*time.Millisecond), WithRetry(5, 5*time.Millisecond, 2*time.Millisecond))
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(seed), uint64(w)))
			cancelAfter := func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), time.Duration(rng.IntN(3000))*time.Microsecond)
			}
			for range 60 {
				opts := []LockOption{WithKeepAlive(KeepAlive{Fraction: 0.3 + rng.Float64()*0.6})}
				if rng.IntN(2) == 0 {
					opts = append(opts, WithFair())
				}
				ctx, cancel := cancelAfter()
				l, err := m.Acquire(ctx, "cancel/x", ttl, opts...)
				cancel()
				if err != nil {
					assert.ErrorIs(t, err, ErrNotAcquired)
					continue
				}
				if rng.IntN(2) == 0 {
					ctx, cancel := cancelAfter()
					_ = l.Extend(ctx, ttl)
					cancel()
				}
				select {
				case <-l.Done():
					assert.ErrorIs(t, l.Err(), ErrLost, "Done before Release means lost")
				case <-time.After(time.Duration(rng.IntN(20)) * time.Millisecond):
				}
				ctx, cancel = cancelAfter()
				_ = l.Release(ctx)
				cancel()
				<-l.Done()
			}
		})
	}
	wg.Wait()
	time.Sleep(ttl + 100*time.Millisecond)
	for _, s := range c.Servers {
		keys := s.Keys(context.Background())
		for _, k := range keys {
			require.NotEqual(t, "lock:cancel/x", k, "master %s: a lock key outlived its TTL", s.Name)
		}
	}
}
