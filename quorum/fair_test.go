package quorum

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

func TestFairUnwindPutsTheWaiterBack(t *testing.T) {
	ctx := context.Background()
	c, _ := testCluster(t, 1)
	cl := c.Servers[0].Client()
	keys := []string{"lock:u", "lock:u:queue"}
	tests := []struct {
		name   string
		lock   string
		want   int64
		queued bool
	}{
		{"ours: deleted and queued again", "v", 1, true},
		{"missing: untouched", "", 0, false},
		{"someone else's: untouched", "w", -1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, cl.Del(ctx, keys...).Err())
			if tt.lock != "" {
				require.NoError(t, cl.Set(ctx, "lock:u", tt.lock, time.Minute).Err())
			}
			r, err := goRedisScript(fairUnwindScript).Run(ctx, cl, keys, "v", "me", "100", 1000).Int64()
			require.NoError(t, err)
			assert.Equal(t, tt.want, r)
			q, err := cl.ZRangeArgs(ctx, zrange0("lock:u:queue")).Result()
			require.NoError(t, err)
			if tt.queued {
				assert.Equal(t, []string{"q:me"}, q)
				assert.Zero(t, cl.Exists(ctx, "lock:u").Val())
			} else {
				assert.Empty(t, q)
				assert.Equal(t, tt.lock, cl.Get(ctx, "lock:u").Val())
			}
		})
	}
}

// queueOn returns, per master, the waiter ids queued for key (heartbeat entries left out).
func queueOn(t *testing.T, c *redistest.Cluster, key string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, s := range c.Servers {
		ms, err := s.Client().ZRangeArgs(context.Background(), zrange0(key+queueSuffix)).Result()
		if err == nil && len(ms) > 0 {
			out[s.Name] = ms
		}
	}
	return out
}

// zrange0 reads a whole fair queue in score order.
func zrange0(key string) redis.ZRangeArgs {
	return redis.ZRangeArgs{Key: key, Start: "0", Stop: "+inf", ByScore: true}
}

func zmember(score float64, member string) redis.Z { return redis.Z{Score: score, Member: member} }

func TestFairScript(t *testing.T) {
	ctx := context.Background()
	c, _ := testCluster(t, 1)
	cl := c.Servers[0].Client()
	keys := []string{"lock:f", "lock:f:queue"}
	run := func(value, id, score, mode string) int64 {
		r, err := fairAcquireScript.Run(ctx, cl, keys, value, 5000, id, score, 1000, mode).Int64()
		require.NoError(t, err)
		return r
	}
	// queue puts waiter id in the queue while the key is held, then frees the key.
	queue := func(id, score string) {
		cl.Set(ctx, "lock:f", "held", time.Minute)
		require.EqualValues(t, 0, run("w-"+id, id, score, "wait"))
		cl.Del(ctx, "lock:f")
	}
	tests := []struct {
		name  string
		setup func()
		value string
		id    string
		score string
		mode  string
		want  int64
		queue []string // q: members left, in order
	}{
		{"empty queue, free key: acquired, not queued", nil, "v1", "a", "100", "wait", 1, nil},
		{"try on empty queue", nil, "v1", "a", "100", "try", 1, nil},
		{"held key: queued", func() { cl.Set(ctx, "lock:f", "x", time.Minute) }, "v1", "a", "100", "wait", 0, []string{"q:a"}},
		{"held by shared holders: queued, told apart", func() { cl.ZAdd(ctx, "lock:f", zmember(1, "r")) }, "v1", "a", "100", "wait", -3, []string{"q:a"}},
		{"try on shared holders", func() { cl.ZAdd(ctx, "lock:f", zmember(1, "r")) }, "v1", "a", "100", "try", -3, nil},
		{"another waiter ahead", func() { queue("b", "50") }, "v1", "a", "100", "wait", -2, []string{"q:b", "q:a"}},
		{"try with someone queued", func() { queue("b", "50") }, "v1", "a", "100", "try", -2, []string{"q:b"}},
		{"ahead by score, not by arrival", func() { queue("b", "200") }, "v1", "a", "100", "wait", 1, []string{"q:b"}},
		{"tie broken by member", func() { queue("b", "100") }, "v1", "a", "100", "wait", 1, []string{"q:b"}},
		{"expired heartbeat dropped", func() {
			cl.ZAdd(ctx, "lock:f:queue", zmember(50, "q:dead"), zmember(-1, "h:dead"))
		}, "v1", "a", "100", "wait", 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, cl.Del(ctx, keys...).Err())
			if tt.setup != nil {
				tt.setup()
			}
			assert.Equal(t, tt.want, run(tt.value, tt.id, tt.score, tt.mode))
			q, err := cl.ZRangeArgs(ctx, zrange0("lock:f:queue")).Result()
			require.NoError(t, err)
			assert.Equal(t, tt.queue, nilIfEmpty(q))
			if tt.want == 1 {
				assert.Equal(t, tt.value, cl.Get(ctx, "lock:f").Val())
			}
			if len(q) > 0 {
				assert.Positive(t, cl.PTTL(ctx, "lock:f:queue").Val(), "the queue key expires")
			}
		})
	}
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

func TestFairWaitersServedInArrivalOrder(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 5, WithRetry(100, 50*time.Millisecond, 20*time.Millisecond))
	holder, err := m.Acquire(ctx, "fifo", 10*time.Second, WithFair())
	require.NoError(t, err)
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := m.Acquire(ctx, "fifo", 10*time.Second, WithFair())
			if !assert.NoError(t, err) {
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			time.Sleep(5 * time.Millisecond)
			assert.NoError(t, l.Release(ctx))
		}()
		// Wait until waiter i is queued on every master, so arrival order is known.
		require.Eventually(t, func() bool {
			q := queueOn(t, c, "lock:fifo")
			return len(q) == 5 && len(q["a"]) == i+1 && len(q["e"]) == i+1
		}, 5*time.Second, 2*time.Millisecond)
		time.Sleep(2 * time.Millisecond) // distinct enqueue milliseconds
	}
	q := queueOn(t, c, "lock:fifo")
	for _, s := range c.Servers {
		assert.Equal(t, q["a"], q[s.Name], "every master has the same order")
	}
	_, err = m.TryAcquire(ctx, "fifo", time.Second, WithFair())
	assert.ErrorIs(t, err, ErrHeld, "a fair TryAcquire fails while others are queued")
	require.NoError(t, holder.Release(ctx))
	wg.Wait()
	assert.Equal(t, []int{0, 1, 2, 3}, order)
	assert.Empty(t, queueOn(t, c, "lock:fifo"), "every waiter left the queue")
	l, err := m.TryAcquire(ctx, "fifo", time.Second, WithFair())
	require.NoError(t, err, "nobody queued: TryAcquire succeeds")
	require.NoError(t, l.Release(ctx))
}

func TestFairWaiterLeavesQueueOnCancel(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 5, WithRetry(100, 50*time.Millisecond, 20*time.Millisecond))
	holder, err := m.Acquire(ctx, "cancel", 10*time.Second, WithFair())
	require.NoError(t, err)
	wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, err = m.Acquire(wctx, "cancel", 10*time.Second, WithFair())
	assert.ErrorIs(t, err, ErrNotAcquired)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Empty(t, queueOn(t, c, "lock:cancel"), "the waiter left the queue")

	// Giving up after the retry budget leaves the queue too.
	m2 := managerFor(t, c, WithRetry(2, 10*time.Millisecond, 0))
	_, err = m2.Acquire(ctx, "cancel", time.Second, WithFair())
	assert.ErrorIs(t, err, ErrHeld)
	assert.Empty(t, queueOn(t, c, "lock:cancel"))
	require.NoError(t, holder.Release(ctx))
}

// TestFairQueueNotStuckAfterWaiterKilled kills a waiting process (SIGKILL: it cannot
// leave the queue) and checks that the waiter behind it still gets the lock, once
// the dead one's heartbeat has expired.
func TestFairQueueNotStuckAfterWaiterKilled(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 5, WithRetry(1000, 50*time.Millisecond, 20*time.Millisecond))
	holder, err := m.Acquire(ctx, "crash", 30*time.Second, WithFair())
	require.NoError(t, err)

	child := exec.Command(os.Args[0], "-test.run=^TestFairChildWaiter$")
	child.Env = append(os.Environ(), "REDLOCK_FAIR_CHILD="+strings.Join(c.Addrs(), ","))
	require.NoError(t, child.Start())
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	require.Eventually(t, func() bool { return len(queueOn(t, c, "lock:crash")) == 5 }, 10*time.Second, 5*time.Millisecond,
		"the child queued on every master")
	time.Sleep(2 * time.Millisecond)

	got := make(chan error, 1)
	var l *Lock
	go func() {
		var err error
		l, err = m.Acquire(ctx, "crash", 30*time.Second, WithFair())
		got <- err
	}()
	require.Eventually(t, func() bool { return len(queueOn(t, c, "lock:crash")["a"]) == 2 }, 5*time.Second, 2*time.Millisecond)
	require.NoError(t, child.Process.Kill())
	_ = child.Wait()
	require.NoError(t, holder.Release(ctx))

	select {
	case err := <-got:
		require.NoError(t, err, "the waiter behind the dead one got the lock")
	case <-time.After(m.heartbeatTTL() + 10*time.Second):
		t.Fatal("queue stuck behind a dead waiter")
	}
	require.NoError(t, l.Release(ctx))
	// The dead waiter's entries go lazily: on the masters where its heartbeat had
	// expired when the next waiter's round ran there, at once; where its last
	// heartbeat landed a moment later, with the queue key's TTL (two heartbeats).
	assert.Eventually(t, func() bool { return len(queueOn(t, c, "lock:crash")) == 0 }, 2*m.heartbeatTTL()+2*time.Second, 20*time.Millisecond,
		"the dead waiter was dropped")
}

// TestFairChildWaiter is the process that TestFairQueueNotStuckAfterWaiterKilled
// kills; it does nothing unless started by it.
func TestFairChildWaiter(t *testing.T) {
	addrs := os.Getenv("REDLOCK_FAIR_CHILD")
	if addrs == "" {
		return
	}
	var nodes []Node
	for i, a := range strings.Split(addrs, ",") {
		nodes = append(nodes, Node{Name: string(rune('a' + i)), Addr: a})
	}
	m, err := New(nodes, WithRestartQuarantine(0), WithNodeTimeout(200*time.Millisecond), WithRetry(1000, 50*time.Millisecond, 20*time.Millisecond))
	require.NoError(t, err)
	_, err = m.Acquire(context.Background(), "crash", 30*time.Second, WithFair())
	t.Fatalf("the child was not killed while waiting (%v)", err)
}

// TestFairContentionWithMasterKills runs contending fair clients while two of five
// masters are killed: never two holders, every acquisition served, no queue left.
func TestFairContentionWithMasterKills(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t, 5, redistest.Options{})
	const clients, ops = 5, 8
	var holders, maxHolders, done atomic.Int32
	var wg sync.WaitGroup
	for w := 0; w < clients; w++ {
		m := managerFor(t, c, WithRetry(1000, 30*time.Millisecond, 10*time.Millisecond), WithNodeTimeout(100*time.Millisecond))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < ops; i++ {
				actx, cancel := context.WithTimeout(ctx, 20*time.Second)
				l, err := m.Acquire(actx, "hot", 2*time.Second, WithFair())
				cancel()
				if !assert.NoError(t, err) {
					return
				}
				n := holders.Add(1)
				for {
					old := maxHolders.Load()
					if n <= old || maxHolders.CompareAndSwap(old, n) {
						break
					}
				}
				time.Sleep(2 * time.Millisecond)
				holders.Add(-1)
				if time.Now().Before(l.Until()) {
					done.Add(1)
				}
				_ = l.Release(ctx) // may name the killed masters
			}
		}()
	}
	require.Eventually(t, func() bool { return done.Load() >= clients*ops/3 }, 20*time.Second, time.Millisecond)
	c.Servers[1].Kill()
	c.Servers[3].Kill()
	wg.Wait()
	assert.EqualValues(t, 1, maxHolders.Load(), "never two holders")
	assert.EqualValues(t, clients*ops, done.Load(), "every acquisition served within its validity")
	for _, i := range []int{0, 2, 4} {
		n, err := c.Servers[i].Client().Exists(ctx, "lock:hot", "lock:hot:queue").Result()
		require.NoError(t, err)
		assert.Zero(t, n, "master %s: nothing left", c.Servers[i].Name)
	}
}

func TestWakeUpEndsTheWaitBeforeTheRetryDelay(t *testing.T) {
	ctx := context.Background()
	for _, fair := range []bool{false, true} {
		t.Run(fmt.Sprintf("fair=%v", fair), func(t *testing.T) {
			var opts []LockOption
			if fair {
				opts = append(opts, WithFair())
			}
			// A retry delay of 3s: without a wake-up the waiter would sleep it out.
			c, m := testCluster(t, 5, WithRetry(5, 3*time.Second, 0))
			holder, err := m.Acquire(ctx, "wake", 10*time.Second, opts...)
			require.NoError(t, err)
			other := managerFor(t, c, WithRetry(5, 3*time.Second, 0))
			got := make(chan *Lock, 1)
			go func() {
				l, err := other.Acquire(ctx, "wake", 10*time.Second, opts...)
				assert.NoError(t, err)
				got <- l
			}()
			time.Sleep(300 * time.Millisecond) // the waiter failed its first round and subscribed
			released := time.Now()
			require.NoError(t, holder.Release(ctx))
			select {
			case l := <-got:
				require.NotNil(t, l)
				assert.Less(t, time.Since(released), 2*time.Second, "woken, not retried after 3s")
				require.NoError(t, l.Release(ctx))
			case <-time.After(10 * time.Second):
				t.Fatal("waiter never got the lock")
			}
		})
	}
}

func TestCloseStopsTheWakeHub(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3, WithRetry(3, 10*time.Millisecond, 0))
	holder, err := m.TryAcquire(ctx, "closing", 10*time.Second)
	require.NoError(t, err)
	_, err = m.Acquire(ctx, "closing", time.Second) // starts the hub, gives up
	require.ErrorIs(t, err, ErrHeld)
	require.NotNil(t, m.wake, "a waiter started the hub")
	require.NoError(t, holder.Release(ctx))
	require.NoError(t, m.Close())
	assert.Nil(t, m.hub(), "no hub after Close")
	_, err = m.Acquire(ctx, "closing", time.Second)
	assert.Error(t, err, "a closed Manager takes no lock")
	_ = c
}
