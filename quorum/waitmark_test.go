package quorum

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// Waiter markers (waitmark.go): a release publishes only where somebody waits,
// and no waiter loses its wake-up to it.

// wakeListener counts the messages published on every master on the wake-up
// channels of the locks (lock:*:wake*).
type wakeListener struct {
	n  atomic.Int64
	ps []*redis.PubSub
}

func listenWakes(t *testing.T, c *redistest.Cluster) *wakeListener {
	t.Helper()
	ctx := context.Background()
	l := &wakeListener{}
	for _, s := range c.Servers {
		ps := s.Client().PSubscribe(ctx, "lock:*:wake*")
		_, err := ps.Receive(ctx) // the subscription is in place
		require.NoError(t, err)
		l.ps = append(l.ps, ps)
		go func() {
			for range ps.Channel() {
				l.n.Add(1)
			}
		}()
	}
	t.Cleanup(func() {
		for _, ps := range l.ps {
			_ = ps.Close()
		}
	})
	return l
}

// settled returns the count once no message arrived for 100ms.
func (l *wakeListener) settled() int64 {
	for {
		n := l.n.Load()
		time.Sleep(100 * time.Millisecond)
		if l.n.Load() == n {
			return n
		}
	}
}

func TestReleaseWithNobodyWaitingPublishesNothing(t *testing.T) {
	ctx := context.Background()
	for _, fair := range []bool{false, true} {
		t.Run(fmt.Sprintf("fair=%v", fair), func(t *testing.T) {
			c, m := testCluster(t, 3, WithNodeTimeout(2*time.Second))
			wakes := listenWakes(t, c)
			var opts []LockOption
			if fair {
				opts = append(opts, WithFair())
			}
			for range 20 {
				l, err := m.Acquire(ctx, "quiet", time.Minute, opts...)
				require.NoError(t, err)
				require.NoError(t, l.Release(ctx))
			}
			assert.Zero(t, wakes.settled(), "nobody waited: no release published")
			for _, s := range c.Servers {
				n, err := s.Client().Exists(ctx, "lock:quiet", "lock:quiet:queue").Result()
				require.NoError(t, err)
				assert.Zero(t, n, "%s: nothing left", s.Name)
			}
		})
	}
}

func TestReleaseScriptPublishesWhereAWaiterMarked(t *testing.T) {
	ctx := context.Background()
	c, _ := testCluster(t, 1)
	cl := c.Servers[0].Client()
	live := -float64(time.Now().Add(time.Minute).UnixMilli())
	tests := []struct {
		name    string
		markers []redis.Z // the queue key's members before the release
		all     bool      // ARGV[3] = "all"
		pubs    map[string][]string
		left    int64 // members left in the queue key
	}{
		{name: "nobody waits: nothing", pubs: map[string][]string{}},
		{name: "nobody waits, all: the key, to everyone", all: true, pubs: map[string][]string{tChan: {tKey}}},
		{name: "a plain waiter's marker: the key, to everyone; the marker stays", markers: []redis.Z{{Score: live, Member: "h:~a"}},
			pubs: map[string][]string{tChan: {tKey}}, left: 1},
		{name: "an expired marker: the key, to everyone (markers alone are not pruned: they go with the queue key)", markers: []redis.Z{{Score: -1, Member: "h:~a"}},
			pubs: map[string][]string{tChan: {tKey}}, left: 1},
		{name: "only dead fair waiters and a marker: pruned, the key to everyone", markers: []redis.Z{{Score: 100, Member: "q:x"}, {Score: -1, Member: "h:x"}, {Score: live, Member: "h:~a"}},
			pubs: map[string][]string{tChan: {tKey}}, left: 1},
		{name: "a fair head and a plain marker: the head, named", markers: []redis.Z{{Score: 100, Member: "q:x"}, {Score: live, Member: "h:x"}, {Score: live, Member: "h:~a"}},
			pubs: map[string][]string{tChan: {tKey + "\nnext x"}}, left: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, cl.Del(ctx, tQueue).Err())
			if len(tt.markers) > 0 {
				require.NoError(t, cl.ZAdd(ctx, tQueue, tt.markers...).Err())
			}
			require.NoError(t, cl.Set(ctx, tKey, "ours", time.Minute).Err())
			args := []any{"ours", tChan}
			if tt.all {
				args = append(args, "all")
			}
			pubs := published(t, cl, false, func() {
				r, err := releaseScript.Run(ctx, cl, []string{tKey, tQueue}, args...).Int64()
				require.NoError(t, err)
				assert.EqualValues(t, 1, r)
			})
			assert.Equal(t, tt.pubs, pubs)
			n, err := cl.ZCard(ctx, tQueue).Result()
			require.NoError(t, err)
			assert.Equal(t, tt.left, n)
		})
	}
}

func TestWaitRoundScriptMarksWhereTheKeyIsHeld(t *testing.T) {
	ctx := context.Background()
	c, _ := testCluster(t, 1)
	cl := c.Servers[0].Client()
	script := redis.NewScript(waitRoundLua)
	run := func(value string) any {
		r, err := script.Run(ctx, cl, []string{tKey, tQueue}, value, 10000, "~me", 4000).Result()
		require.NoError(t, err)
		return r
	}
	require.NoError(t, cl.Del(ctx, tKey, tQueue).Err())
	require.NoError(t, cl.Set(ctx, tKey, "holder", time.Minute).Err())

	assert.Equal(t, "holder", run("mine"), "held: the holder's value")
	score, err := cl.ZScore(ctx, tQueue, "h:~me").Result()
	require.NoError(t, err, "marked")
	now := float64(time.Now().UnixMilli())
	assert.InDelta(t, -(now + 4000), score, 2000, "the marker's deadline is now + its longest TTL (server ms)")

	require.NoError(t, cl.PExpire(ctx, tKey, 1500*time.Millisecond).Err())
	run("mine")
	score, err = cl.ZScore(ctx, tQueue, "h:~me").Result()
	require.NoError(t, err)
	now = float64(time.Now().UnixMilli())
	assert.InDelta(t, -(now + 1500), score, 1000, "no longer than the key that keeps it out")
	require.NoError(t, cl.PExpire(ctx, tKey, time.Minute).Err())
	pttl, err := cl.PTTL(ctx, tQueue).Result()
	require.NoError(t, err)
	assert.Greater(t, pttl, 3*time.Second, "the queue key lives as long as the marker")

	require.NoError(t, cl.Del(ctx, tKey).Err())
	assert.Equal(t, "OK", run("mine"), "free: set")
	v, err := cl.Get(ctx, tKey).Result()
	require.NoError(t, err)
	assert.Equal(t, "mine", v)
	n, err := cl.Exists(ctx, tQueue).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "set: its own marker dropped (the last one: the queue key is gone)")

	require.NoError(t, cl.Del(ctx, tKey).Err())
	require.NoError(t, cl.ZAdd(ctx, tKey, redis.Z{Score: 1, Member: "shared"}).Err())
	assert.EqualValues(t, 0, run("mine"), "a key of another type: holder unknown, no error")
	n, err = cl.Exists(ctx, tQueue).Result()
	require.NoError(t, err)
	assert.EqualValues(t, 1, n, "marked")
	require.NoError(t, cl.Del(ctx, tKey, tQueue).Err())
}

// handoffGaps runs waiters that each take name rounds times (holding it for
// hold), every one with a Manager of its own whose retry delay is 5s, after the
// holder lets go; it returns the longest time between a release and the next
// acquisition while waiters remained. A release that woke nobody shows as a gap
// of up to the retry delay.
func handoffGaps(t *testing.T, c *redistest.Cluster, name string, fairs []bool, rounds int, hold time.Duration) time.Duration {
	t.Helper()
	ctx := context.Background()
	holderM := managerFor(t, c, WithRetry(1000, 5*time.Second, 0), WithNodeTimeout(2*time.Second))
	opts := func(fair bool) []LockOption {
		if fair {
			return []LockOption{WithFair()}
		}
		return nil
	}
	l, err := holderM.Acquire(ctx, name, time.Minute, opts(fairs[0])...)
	require.NoError(t, err)
	var (
		mu       sync.Mutex
		released time.Time
		worst    time.Duration
		wg       sync.WaitGroup
	)
	for i, fair := range fairs {
		m := managerFor(t, c, WithRetry(1000, 5*time.Second, 0), WithNodeTimeout(2*time.Second))
		wg.Go(func() {
			for range rounds {
				wl, err := m.Acquire(ctx, name, time.Minute, opts(fair)...)
				if !assert.NoError(t, err, "waiter %d", i) {
					return
				}
				mu.Lock()
				worst = max(worst, time.Since(released))
				mu.Unlock()
				time.Sleep(hold)
				mu.Lock()
				released = time.Now()
				mu.Unlock()
				assert.NoError(t, wl.Release(ctx))
			}
		})
	}
	time.Sleep(500 * time.Millisecond) // every waiter failed its first rounds and waits
	mu.Lock()
	released = time.Now()
	mu.Unlock()
	require.NoError(t, l.Release(ctx))
	wg.Wait()
	return worst
}

func TestEveryReleaseWakesAWaiterPromptly(t *testing.T) {
	tests := []struct {
		name  string
		fairs []bool
	}{
		{"plain", []bool{false, false, false, false}},
		{"fair", []bool{true, true, true, true}},
		{"plain and fair on one name", []bool{false, true, false, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := redistest.Start(t, 3, redistest.Options{})
			worst := handoffGaps(t, c, "handoff", tt.fairs, 5, 5*time.Millisecond)
			assert.Less(t, worst, 2*time.Second, "a release woke a waiter, not its 5s retry delay")
		})
	}
}

func TestPrimitiveWaitersAreWokenByAPlainRelease(t *testing.T) {
	tests := []struct {
		name string
		// wait blocks until it holds what the plain lock "prim" keeps it from.
		wait func(ctx context.Context, m *Manager) (*Lock, error)
	}{
		{"a shared hold", func(ctx context.Context, m *Manager) (*Lock, error) {
			return m.Acquire(ctx, "prim", time.Minute, withShared())
		}},
		{"a multi-name lock", func(ctx context.Context, m *Manager) (*Lock, error) {
			return m.takeMulti(ctx, []string{"prim", "prim2"}, time.Minute)
		}},
		{"a plain lock (the same name)", func(ctx context.Context, m *Manager) (*Lock, error) {
			return m.Acquire(ctx, "prim", time.Minute)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			c, holder := testCluster(t, 3, WithNodeTimeout(2*time.Second))
			l, err := holder.Acquire(ctx, "prim", time.Minute)
			require.NoError(t, err)
			m := managerFor(t, c, WithRetry(1000, 5*time.Second, 0), WithNodeTimeout(2*time.Second))
			wl, after := handedOver(t, func() (*Lock, error) { return tt.wait(ctx, m) }, func() {
				require.NoError(t, l.Release(ctx))
			})
			assert.Less(t, after, 2*time.Second, "woken, not retried after 5s")
			require.NoError(t, wl.Release(ctx))
		})
	}
}

// handedOver starts acquire, lets it fail and wait (500ms), runs release, and
// returns what acquire got and how long after the release it got it.
func handedOver(t *testing.T, acquire func() (*Lock, error), release func()) (*Lock, time.Duration) {
	t.Helper()
	got := make(chan *Lock, 1)
	go func() {
		l, err := acquire()
		assert.NoError(t, err)
		got <- l
	}()
	time.Sleep(500 * time.Millisecond)
	released := time.Now()
	release()
	select {
	case l := <-got:
		require.NotNil(t, l)
		return l, time.Since(released)
	case <-time.After(15 * time.Second):
		t.Fatal("the waiter never got it")
	}
	return nil, 0
}

func TestLostMarkersCostAtMostOneRetryDelay(t *testing.T) {
	const delay = 3 * time.Second
	tests := []struct {
		name string
		lose func(t *testing.T, c *redistest.Cluster)
		// prompt: the masters that kept the lock key still hold the marker
		prompt bool
	}{
		{"every queue key deleted (the markers lost, the lock kept)", func(t *testing.T, c *redistest.Cluster) {
			for _, s := range c.Servers {
				require.NoError(t, s.Client().Del(context.Background(), "lock:lost:queue").Err())
			}
		}, false},
		{"one master restarted without its data", func(t *testing.T, c *redistest.Cluster) {
			c.Servers[0].Restart(false)
		}, true},
		{"every master flushed (markers and lock lost)", func(t *testing.T, c *redistest.Cluster) {
			for _, s := range c.Servers {
				require.NoError(t, s.Client().FlushAll(context.Background()).Err())
			}
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			c, holder := testCluster(t, 3, WithNodeTimeout(2*time.Second))
			l, err := holder.Acquire(ctx, "lost", time.Minute)
			require.NoError(t, err)
			m := managerFor(t, c, WithRetry(1000, delay, 0), WithNodeTimeout(time.Second))
			acquire := func() (*Lock, error) { return m.Acquire(ctx, "lost", time.Minute) }
			wl, after := handedOver(t, acquire, func() {
				tt.lose(t, c)
				_ = l.Release(ctx) // may name a master that lost the key
			})
			bound := delay + 1500*time.Millisecond
			if tt.prompt {
				bound = 1500 * time.Millisecond
			}
			assert.Less(t, after, bound)
			// Marked again by its rounds since: the next waiter is woken at once.
			nl, after := handedOver(t, acquire, func() { require.NoError(t, wl.Release(ctx)) })
			assert.Less(t, after, 1500*time.Millisecond, "marked again: woken")
			require.NoError(t, nl.Release(ctx))
		})
	}
}

func TestAnAcquisitionThatEndsDropsItsMarker(t *testing.T) {
	tests := []struct {
		name string
		wait func(ctx context.Context, m *Manager) (*Lock, error)
	}{
		{"a plain lock", func(ctx context.Context, m *Manager) (*Lock, error) {
			return m.Acquire(ctx, "gone", time.Minute)
		}},
		{"a shared hold", func(ctx context.Context, m *Manager) (*Lock, error) {
			return m.Acquire(ctx, "gone", time.Minute, withShared())
		}},
	}
	for _, tt := range tests {
		for _, giveUp := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, gives up=%v", tt.name, giveUp), func(t *testing.T) {
				ctx := context.Background()
				c, holder := testCluster(t, 3, WithNodeTimeout(2*time.Second))
				l, err := holder.Acquire(ctx, "gone", time.Minute)
				require.NoError(t, err)
				m := managerFor(t, c, WithRetry(1000, 5*time.Second, 0), WithNodeTimeout(2*time.Second))
				wctx, cancel := context.WithCancel(ctx)
				defer cancel()
				done := make(chan *Lock, 1)
				go func() {
					wl, _ := tt.wait(wctx, m)
					done <- wl
				}()
				queued := func() bool {
					for _, s := range c.Servers {
						if n, err := s.Client().Exists(ctx, "lock:gone:queue").Result(); err != nil || n > 0 {
							return true
						}
					}
					return false
				}
				require.Eventually(t, queued, 5*time.Second, 10*time.Millisecond, "the waiter marked")
				if giveUp {
					cancel()
				} else {
					require.NoError(t, l.Release(ctx))
				}
				if wl := <-done; wl != nil {
					defer func() { assert.NoError(t, wl.Release(ctx)) }()
				}
				assert.Eventually(t, func() bool { return !queued() }, 5*time.Second, 10*time.Millisecond,
					"no marker left (the holder's key lives a minute)")
			})
		}
	}
}
