package quorum

import (
	"context"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Attacks on the fair queue's wake-ups: they are hints, and the scripts on a
// majority of masters decide who holds the lock.

// TestFairHostileWakeNamingEveryWaiter: a hostile client reads the queue and
// publishes, again and again, wake-ups naming every queued waiter, on the name's
// channel, its copy channel and every waiter's own channel. Every waiter wakes and
// runs rounds it did not need, but only the head wins: never two holders, the
// waiters that were queued first are served first, and nothing is left behind.
func TestFairHostileWakeNamingEveryWaiter(t *testing.T) {
	ctx := context.Background()
	// A retry delay of 5 s: within the test, waiters run rounds only when woken.
	c, m := testCluster(t, 3, WithRetry(1000, 5*time.Second, 0))
	holder, err := m.Acquire(ctx, "hostile", 10*time.Second, WithFair())
	require.NoError(t, err)
	const waiters = 5
	var holders, maxHolders atomic.Int32
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	var rounds roundCounter
	for i := range waiters {
		w := managerFor(t, c, WithRetry(1000, 5*time.Second, 0), WithObserver(&rounds))
		wg.Go(func() {
			wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			l, err := w.Acquire(wctx, "hostile", 10*time.Second, WithFair())
			if !assert.NoError(t, err) {
				return
			}
			n := holders.Add(1)
			for old := maxHolders.Load(); n > old && !maxHolders.CompareAndSwap(old, n); old = maxHolders.Load() {
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			time.Sleep(20 * time.Millisecond) // the attack goes on while it holds
			holders.Add(-1)
			assert.NoError(t, l.Release(ctx))
		})
		// Queued one after the other: waiter i is i-th in the queue.
		require.Eventually(t, func() bool { return len(queueOn(t, c, "lock:hostile")[c.Servers[0].Name]) == i+1 },
			5*time.Second, time.Millisecond)
	}
	attack, stop := context.WithCancel(ctx)
	var published atomic.Int64
	attacked := make(chan struct{})
	go func() {
		defer close(attacked)
		cl := c.Servers[0].Client()
		for attack.Err() == nil {
			members, err := cl.ZRangeArgs(attack, zrange0("lock:hostile:queue")).Result()
			if err != nil {
				continue
			}
			var ids []string
			for _, mb := range members {
				if id, ok := strings.CutPrefix(mb, "q:"); ok {
					ids = append(ids, id)
				}
			}
			msg := "lock:hostile" + wakeNext + strings.Join(ids, " ")
			chans := []string{wakeChannel("lock:hostile"), anyWakeChannel("lock:hostile")}
			for _, id := range ids {
				if _, tag, ok := strings.Cut(id, "."); ok {
					chans = append(chans, ownWakeChannel("lock:hostile", tag))
				}
			}
			for _, s := range c.Servers {
				for _, ch := range chans {
					if s.Client().Publish(attack, ch, msg).Err() == nil {
						published.Add(1)
					}
				}
			}
			time.Sleep(time.Millisecond)
		}
	}()
	before := rounds.n.Load()
	time.Sleep(50 * time.Millisecond) // the waiters run rounds on the attack's wake-ups alone
	assert.Greater(t, rounds.n.Load(), before, "the attack woke the waiters")
	mu.Lock()
	assert.Empty(t, order, "no waiter took the held lock")
	mu.Unlock()
	require.NoError(t, holder.Release(ctx))
	wg.Wait()
	stop()
	<-attacked
	assert.Positive(t, published.Load())
	assert.EqualValues(t, 1, maxHolders.Load(), "never two holders")
	assert.Equal(t, []int{0, 1, 2, 3, 4}, order, "served in queue order")
	assert.Empty(t, queueOn(t, c, "lock:hostile"), "nothing left in the queue")
	assert.Empty(t, keysOn(t, c, "lock:hostile"), "nothing left held")
}

// TestFairWaitersCancelledAtRandomPointsDoNotStallTheRest: fair waiters queue
// behind a holder; some are cancelled at random moments (before the release, while
// the release wakes them, during their round). Those that remain are served one
// after the other without waiting for a retry delay (1 s here) or a heartbeat to
// expire: a waiter that leaves as the head wakes the next. Nothing is left behind.
func TestFairWaitersCancelledAtRandomPointsDoNotStallTheRest(t *testing.T) {
	seed := seedFor(t)
	for run := range 5 {
		rng := rand.New(rand.NewPCG(uint64(seed), uint64(run)))
		ctx := context.Background()
		c, m := testCluster(t, 3, WithRetry(1000, time.Second, 0))
		holder, err := m.Acquire(ctx, "cancelled", 10*time.Second, WithFair())
		require.NoError(t, err)
		const waiters = 6
		var wg sync.WaitGroup
		var served, cancelled atomic.Int32
		var lastServed atomic.Int64
		for i := range waiters {
			w := managerFor(t, c, WithRetry(1000, time.Second, 0))
			wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			if rng.IntN(2) == 0 {
				// Cancelled somewhere between now and a little after the release.
				time.AfterFunc(time.Duration(rng.IntN(40_000))*time.Microsecond, cancel)
			}
			wg.Go(func() {
				defer cancel()
				l, err := w.Acquire(wctx, "cancelled", 10*time.Second, WithFair())
				if err != nil {
					assert.ErrorIs(t, err, ErrNotAcquired)
					cancelled.Add(1)
					return
				}
				served.Add(1)
				lastServed.Store(time.Now().UnixNano())
				assert.NoError(t, l.Release(ctx))
			})
			require.Eventually(t, func() bool {
				return len(queueOn(t, c, "lock:cancelled")[c.Servers[0].Name]) >= i+1-int(cancelled.Load())
			},
				5*time.Second, time.Millisecond)
		}
		time.Sleep(time.Duration(rng.IntN(20_000)) * time.Microsecond)
		released := time.Now()
		require.NoError(t, holder.Release(ctx))
		wg.Wait()
		assert.EqualValues(t, waiters, served.Load()+cancelled.Load())
		if served.Load() > 0 {
			// Each handoff takes a round or two; a stall would take the 1 s retry delay.
			assert.Less(t, time.Duration(lastServed.Load()-released.UnixNano()), 700*time.Millisecond,
				"run %d: %d served, %d cancelled: the queue stalled", run, served.Load(), cancelled.Load())
		}
		assert.Eventually(t, func() bool { return len(queueOn(t, c, "lock:cancelled")) == 0 }, 2*time.Second, 10*time.Millisecond,
			"run %d: nothing left in the queue", run)
		assert.Empty(t, keysOn(t, c, "lock:cancelled"), "run %d: nothing left held", run)
	}
}
