package quorum

// Attacks on a plain lock's release in its short form (release.lua given the lock
// key and the value only: it names NAME:queue and NAME:wake itself). What a user
// relies on is measured: how long after the release a waiter holds the lock (each
// waiter's retry delay is 5 s: a lost wake-up shows as a wait of seconds), Done,
// and the keys left on each master.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/faults"
	"github.com/redlock/redlock/internal/redistest"
)

// waiterRetry is the waiters' retry delay: a wake-up lost costs this much.
const waiterRetry = 5 * time.Second

// wakeBound is how soon after a release a woken waiter holds the lock, generously
// (the machine is shared): far below waiterRetry.
const wakeBound = 2 * time.Second

// managerVia is managerFor with each Node changed by mod (a proxy's Dialer, an ACL
// user).
func managerVia(t *testing.T, c *redistest.Cluster, mod func(i int, n *Node), opts ...Option) *Manager {
	t.Helper()
	nodes := make([]Node, len(c.Servers))
	for i, s := range c.Servers {
		nodes[i] = Node{Name: s.Name, Addr: s.Addr()}
		if mod != nil {
			mod(i, &nodes[i])
		}
	}
	base := []Option{WithRestartQuarantine(0), WithNodeTimeout(200 * time.Millisecond), WithRetry(3, 20*time.Millisecond, 10*time.Millisecond)}
	m, err := New(nodes, append(base, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// waiterOpts are the options of a waiter whose wake-ups are measured.
func waiterOpts() []Option {
	return []Option{WithRetry(1000, waiterRetry, 0), WithNodeTimeout(time.Second)}
}

// checkLeftKeys requires that no lock key of name is left on any master, and that
// whatever else of name is left (waiters' markers) has a TTL.
func checkLeftKeys(t *testing.T, c *redistest.Cluster, key string) { checkLeftKeysOf(t, c, key, false) }

// checkLeftKeysOf is checkLeftKeys; with partial, a lock key may be left where a
// release did not reach (a master paused or cut off then: ErrPartialRelease), with
// a TTL of at most a minute.
func checkLeftKeysOf(t *testing.T, c *redistest.Cluster, key string, partial bool) {
	t.Helper()
	ctx := context.Background()
	for _, s := range c.Servers {
		keys, err := s.Client().Keys(ctx, EscapeGlob(key)+"*").Result()
		require.NoError(t, err)
		for _, k := range keys {
			if k == key {
				pttl := s.Client().PTTL(ctx, k).Val()
				if !partial || pttl <= 0 || pttl > time.Minute {
					t.Errorf("%s: the lock key %q is left (PTTL %v)", s.Name, k, pttl)
				}
				continue
			}
			if k == key+queueSuffix {
				typ := s.Client().Type(ctx, k).Val()
				if typ != "zset" {
					continue // a foreign key the test wrote
				}
			}
			pttl := s.Client().PTTL(ctx, k).Val()
			if pttl == -2 {
				continue // expired since it was listed
			}
			assert.Positive(t, pttl, "%s: %q is left without a TTL", s.Name, k)
		}
	}
}

// releaseFault is something done to the masters or the holder's links between the
// holder's acquisition and its release; undo runs once the waiter holds the lock.
type releaseFault struct {
	name    string
	partial bool // a master may miss the release: its copy expires
	do      func(t *testing.T, c *redistest.Cluster, holderNet []*faults.Proxy) (undo func())
}

// Faults of the network and of the script cache at a plain lock's release, with a
// plain waiter: the waiter holds the lock within wakeBound of the release (its
// retry delay is 5 s).
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

// Names the short form builds its queue key and channel from: glob characters,
// colons, non-ASCII, the longest name, a name ending like a key of another kind.
// Each waiter (plain, fair, shared, multi-name, candidate) is woken; ValidateName
// still refuses what it refused.
func TestAttackShortReleaseNamesAndWaiterKinds(t *testing.T) {
	names := []string{"a*b?c[d]e\\f", "x:queue:y", "ünï:cödé", strings.Repeat("n", MaxNameLen-1) + ":", "q:fence:x"}
	for _, bad := range []string{"a b", "x:queue", "x:fence", "x:xwait", "tab\tname", strings.Repeat("n", MaxNameLen+1), "nul\x00", "x:permit:3"} {
		assert.ErrorIs(t, ValidateName(bad), ErrInvalidName, "%q", bad)
	}
	ctx := context.Background()
	c, holder := testCluster(t, 3)
	for _, name := range names {
		require.NoError(t, ValidateName(name))
		kinds := []struct {
			who     string
			acquire func(ctx context.Context, m *Manager) (*Lock, error)
		}{
			{"plain", func(ctx context.Context, m *Manager) (*Lock, error) { return m.Acquire(ctx, name, time.Minute) }},
			{"fair", func(ctx context.Context, m *Manager) (*Lock, error) {
				return m.Acquire(ctx, name, time.Minute, WithFair())
			}},
			{"shared", func(ctx context.Context, m *Manager) (*Lock, error) {
				return m.Acquire(ctx, name, time.Minute, WithShared())
			}},
			{"multi", func(ctx context.Context, m *Manager) (*Lock, error) {
				// name sorts first: a multi-name waiter hears its first name's release.
				other := name + "-2"
				if len(other) > MaxNameLen {
					other = strings.Repeat("n", MaxNameLen)
				}
				return m.AcquireMulti(ctx, []string{name, other}, time.Minute)
			}},
		}
		for _, k := range kinds {
			m := managerFor(t, c, waiterOpts()...)
			l, err := holder.Acquire(ctx, name, time.Minute)
			require.NoError(t, err)
			d := wakeAfter(t, 300*time.Millisecond, func(ctx context.Context) (*Lock, error) { return k.acquire(ctx, m) },
				func() { require.NoError(t, l.Release(ctx)) })
			assert.Less(t, d, wakeBound, "%s waiter of %q slept its retry delay", k.who, name)
		}
		checkLeftKeys(t, c, holder.Key(name))
	}
	// A candidate waits for a leadership released by Resign (a plain lock on
	// NAME:leader, released in the short form).
	e1, err := holder.Election("a*b:[el]")
	require.NoError(t, err)
	e2, err := managerFor(t, c, waiterOpts()...).Election("a*b:[el]")
	require.NoError(t, err)
	ld, err := e1.Campaign(ctx, "one", time.Minute)
	require.NoError(t, err)
	d := wakeAfter(t, 300*time.Millisecond, func(ctx context.Context) (*Lock, error) {
		l2, err := e2.Campaign(ctx, "two", time.Minute)
		if err != nil {
			return nil, err
		}
		return l2.Lock(), nil
	}, func() { require.NoError(t, ld.Resign(ctx)) })
	assert.Less(t, d, wakeBound, "the candidate slept its retry delay")
}

// Fair waiters are woken one at a time in the order they queued, each by its
// predecessor's short-form release, and nobody sleeps a retry delay.
func TestAttackShortReleaseKeepsFairOrder(t *testing.T) {
	ctx := context.Background()
	c, holder := testCluster(t, 5)
	for trial := range 3 {
		l, err := holder.Acquire(ctx, "fifo", time.Minute)
		require.NoError(t, err)
		const n = 5
		type got struct {
			i  int
			at time.Time
		}
		out := make(chan got, n)
		var wg sync.WaitGroup
		for i := range n {
			m := managerFor(t, c, waiterOpts()...)
			wg.Go(func() {
				wl, err := m.Acquire(ctx, "fifo", time.Minute, WithFair())
				if !assert.NoError(t, err) {
					return
				}
				out <- got{i, time.Now()}
				time.Sleep(10 * time.Millisecond)
				assert.NoError(t, wl.Release(ctx))
			})
			time.Sleep(150 * time.Millisecond) // queued in this order
		}
		time.Sleep(200 * time.Millisecond)
		at := time.Now()
		require.NoError(t, l.Release(ctx))
		var order []int
		prev := at
		for range n {
			select {
			case g := <-out:
				order = append(order, g.i)
				assert.Less(t, g.at.Sub(prev), wakeBound, "trial %d: waiter %d slept its retry delay", trial, g.i)
				prev = g.at
			case <-time.After(30 * time.Second):
				t.Fatalf("trial %d: a fair waiter never got it (order so far %v)", trial, order)
			}
		}
		wg.Wait()
		assert.Equal(t, []int{0, 1, 2, 3, 4}, order, "trial %d: first come, first served", trial)
		t.Logf("trial %d: %d handoffs in %v", trial, n, prev.Sub(at))
	}
	checkLeftKeys(t, c, "lock:fifo")
}

// The lock user of docs/acl.md (keys and channels under lock: only, no CONFIG, no
// KEYS) takes, releases and is woken as the default user is.
func TestAttackShortReleaseUnderTheACLLockUser(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t, 3, redistest.Options{})
	rule := strings.Fields("on >pw resetkeys ~lock:* resetchannels &lock:* -@all +ping +info +select +set +get +del +exists +type +strlen +getrange +pttl +pexpire +pexpireat +time +zadd +zrem +zrange +zrangebyscore +zremrangebyscore +zcount +zscore +hget +hset +hmget +publish +subscribe +unsubscribe +scan +multi +exec +evalsha +eval")
	for _, s := range c.Servers {
		args := []any{"ACL", "SETUSER", "locker"}
		for _, r := range rule {
			args = append(args, r)
		}
		require.NoError(t, s.Client().Do(ctx, args...).Err())
	}
	asLocker := func(_ int, n *Node) { n.Username, n.Password = "locker", "pw" }
	holder := managerVia(t, c, asLocker)
	waiter := managerVia(t, c, asLocker, waiterOpts()...)
	for _, opts := range [][]LockOption{nil, {WithFair()}} {
		for round := range 3 {
			l, err := holder.Acquire(ctx, "acl", time.Minute)
			require.NoError(t, err)
			d := wakeAfter(t, 300*time.Millisecond, func(ctx context.Context) (*Lock, error) {
				return waiter.Acquire(ctx, "acl", time.Minute, opts...)
			}, func() {
				for _, s := range c.Servers { // NOSCRIPT on the second round: EVAL as the lock user
					if round == 1 {
						require.NoError(t, s.Client().ScriptFlush(ctx).Err())
					}
				}
				require.NoError(t, l.Release(ctx))
			})
			assert.Less(t, d, wakeBound, "round %d %v: the waiter slept its retry delay", round, opts)
		}
	}
	for _, s := range c.Servers {
		// Nothing was refused: the ACL log is empty.
		log, err := s.Client().Do(ctx, "ACL", "LOG").Slice()
		require.NoError(t, err)
		assert.Empty(t, log, "%s refused something", s.Name)
	}
	checkLeftKeys(t, c, "lock:acl")
}

// The release script as it was before the short form (an older client: it was
// given NAME:queue and the channel), racing waiters of this version: they are
// woken as by the short form. And a plain waiter of this version with a holder
// that releases through ReleaseToken (the long form, "all").
func TestAttackShortReleaseMixedWithTheLongForm(t *testing.T) {
	ctx := context.Background()
	c, holder := testCluster(t, 5)
	waiter := managerFor(t, c, waiterOpts()...)
	old := redis.NewScript(withWakeHead(oldReleaseSrc))
	for round := range 6 {
		opts := []LockOption(nil)
		if round%2 == 1 {
			opts = []LockOption{WithFair()}
		}
		l, err := holder.Acquire(ctx, "mixed", time.Minute)
		require.NoError(t, err)
		d := wakeAfter(t, time.Duration(round)*60*time.Millisecond, func(ctx context.Context) (*Lock, error) {
			return waiter.Acquire(ctx, "mixed", time.Minute, opts...)
		}, func() {
			switch round % 3 {
			case 0: // an older client's release: the long form of the previous script
				for _, s := range c.Servers {
					r, err := old.Run(ctx, s.Client(), []string{"lock:mixed", "lock:mixed:queue"}, l.Token(), "lock:mixed:wake").Int()
					require.NoError(t, err)
					assert.Equal(t, 1, r)
				}
			case 1: // ReleaseToken: the long form with "all"
				_, err := holder.ReleaseToken(ctx, "mixed", l.Token())
				require.NoError(t, err)
			default:
				require.NoError(t, l.Release(ctx))
			}
		})
		_ = l.Release(ctx)
		assert.Less(t, d, wakeBound, "round %d: the waiter slept its retry delay", round)
	}
	checkLeftKeys(t, c, "lock:mixed")
}

// oldReleaseSrc is release.lua as the previous version shipped it (before the
// short form), for the mixed-clients attack.
const oldReleaseSrc = `local v = redis.call('GET', KEYS[1])
if v ~= ARGV[1] then
  if v == false then
    return 0
  end
  return -1
end
redis.call('DEL', KEYS[1])
if ARGV[2] == '' then
  return 1
end
local queued = false
if KEYS[2] then
  queued = redis.call('TYPE', KEYS[2]).ok == 'zset' -- a key of another type there is no queue
  if not queued and ARGV[3] ~= 'all' then
    return 1
  end
end
local woken = false
if queued and redis.call('ZCOUNT', KEYS[2], 0, '+inf') > 0 then
-- include: wake_head.lua (prune and wakeHead, shared with the other scripts that wake the head)
  prune(KEYS[2])
  woken = wakeHead(ARGV[2], KEYS[1], KEYS[2])
end
if not woken then
  redis.call('PUBLISH', ARGV[2], KEYS[1])
end
return 1
`

// The short form publishes nothing where nobody waits, and a failed round's
// clean-up (the quiet form) never publishes: counted with a subscriber on every
// master's wake-up channels.
func TestAttackShortReleasePublishesOnlyWhereSomebodyWaits(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3)
	var mu sync.Mutex
	heard := map[string]int{}
	for _, s := range c.Servers {
		ps := s.Client().PSubscribe(ctx, "lock:pub*")
		_, err := ps.Receive(ctx)
		require.NoError(t, err)
		t.Cleanup(func() { _ = ps.Close() })
		go func() {
			for msg := range ps.Channel() {
				mu.Lock()
				heard[msg.Channel]++
				mu.Unlock()
			}
		}()
	}
	count := func() int {
		time.Sleep(100 * time.Millisecond)
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, v := range heard {
			n += v
		}
		clear(heard)
		return n
	}
	// Nobody waits: nothing published, 20 times.
	for range 20 {
		l, err := m.Acquire(ctx, "pub", time.Minute)
		require.NoError(t, err)
		require.NoError(t, l.Release(ctx))
	}
	assert.Zero(t, count(), "a release with nobody waiting publishes nothing")
	// A failed round: another holds a quorum; the round's clean-up on the master it
	// took is quiet.
	for _, s := range c.Servers[:2] {
		require.NoError(t, s.Client().Set(ctx, "lock:pub", "someone-else", time.Minute).Err())
	}
	_, err := m.TryAcquire(ctx, "pub", time.Minute)
	require.ErrorIs(t, err, ErrNotAcquired)
	assert.Zero(t, count(), "a failed round's clean-up publishes nothing")
	for _, s := range c.Servers[:2] {
		require.NoError(t, s.Client().Del(ctx, "lock:pub").Err())
	}
	// With a waiter's marker: the release publishes (where the marker is).
	l, err := m.Acquire(ctx, "pub", time.Minute)
	require.NoError(t, err)
	w := managerFor(t, c, waiterOpts()...)
	d := wakeAfter(t, 300*time.Millisecond, func(ctx context.Context) (*Lock, error) { return w.Acquire(ctx, "pub", time.Minute) },
		func() { require.NoError(t, l.Release(ctx)) })
	assert.Less(t, d, wakeBound)
	assert.Positive(t, count(), "the release with a waiter published")
	checkLeftKeys(t, c, "lock:pub")
}

// Regression: a key of another type at NAME:queue (written by another client: no
// lock name can end with :queue) on every master. The release succeeded and left it
// as it was, but published nothing (a key of another type "is no queue"), and the
// plain waiters, who cannot mark a key of another type, slept their whole retry
// delay although the lock was released: they must be woken.
func TestBugHostileQueueKeyLosesThePlainWaitersWakeUp(t *testing.T) {
	writers := []struct {
		name  string
		write func(ctx context.Context, c *redis.Client, key string) error
	}{
		{"a string", func(ctx context.Context, c *redis.Client, key string) error {
			return c.Set(ctx, key, "\x1b[31mhostile", 0).Err()
		}},
		{"a hash", func(ctx context.Context, c *redis.Client, key string) error {
			return c.HSet(ctx, key, "h:x", "1").Err()
		}},
		{"a list", func(ctx context.Context, c *redis.Client, key string) error { return c.RPush(ctx, key, "h:x").Err() }},
		{"a set", func(ctx context.Context, c *redis.Client, key string) error { return c.SAdd(ctx, key, "h:x").Err() }},
		{"a stream", func(ctx context.Context, c *redis.Client, key string) error {
			return c.XAdd(ctx, &redis.XAddArgs{Stream: key, Values: []string{"h:x", "1"}}).Err()
		}},
	}
	ctx := context.Background()
	c, holder := testCluster(t, 3)
	waiter := managerFor(t, c, waiterOpts()...)
	for i, w := range writers {
		t.Run(w.name, func(t *testing.T) {
			name := fmt.Sprint("hostile", i)
			key := holder.Key(name)
			for _, s := range c.Servers {
				require.NoError(t, w.write(ctx, s.Client(), key+queueSuffix))
			}
			before := map[string]string{}
			for _, s := range c.Servers {
				before[s.Name] = s.Client().Type(ctx, key+queueSuffix).Val()
			}
			l, err := holder.Acquire(ctx, name, time.Minute)
			require.NoError(t, err)
			d := wakeAfter(t, 300*time.Millisecond, func(ctx context.Context) (*Lock, error) { return waiter.Acquire(ctx, name, time.Minute) },
				func() { require.NoError(t, l.Release(ctx)) })
			assert.Less(t, d, wakeBound, "the waiter slept its %v retry delay", waiterRetry)
			for _, s := range c.Servers {
				assert.Equal(t, before[s.Name], s.Client().Type(ctx, key+queueSuffix).Val(), "%s: the foreign key is left as it was", s.Name)
				assert.Zero(t, s.Client().Exists(ctx, key).Val(), "%s: the lock key is left", s.Name)
			}
		})
	}
}

// Handoffs under contention: six waiters (plain, fair, shared, multi-name, with 5 s
// retry delays) take the lock in turn, each releasing in the short form (or the
// shared hold's and multi-name hold's own release) after a few milliseconds, while
// the script caches are flushed now and then. Each acquisition follows the previous
// release within wakeBound, but for one at most. Under the race detector, about one
// run in eight had a handoff of a whole retry delay (a plain or a fair waiter, 5 s
// after the last release): the waiters that a release woke collided, none took a
// quorum, their clean-ups published nothing, and none retried soon (the shared
// hold's holders are unknown to a plain round, so no split vote was seen; a second
// split vote in a row was not shortened): TestBugLostWakeUpWhenWokenWaitersCollide.
// A woken waiter whose round collided now retries after short pauses (collided),
// and 50 runs had no such handoff. One is still tolerated: a wake-up is a hint (the
// retry delay is the fallback, SAFETY.md), and the short pauses after a collision
// are bounded; more than one such handoff in a run is a systematic loss.
func TestAttackShortReleaseHandoffsUnderContention(t *testing.T) {
	ctx := context.Background()
	c, _ := testCluster(t, 5)
	kinds := []struct {
		who     string
		acquire func(ctx context.Context, m *Manager) (*Lock, error)
	}{
		{"plain", func(ctx context.Context, m *Manager) (*Lock, error) { return m.Acquire(ctx, "hand", time.Minute) }},
		{"plain", func(ctx context.Context, m *Manager) (*Lock, error) { return m.Acquire(ctx, "hand", time.Minute) }},
		{"fair", func(ctx context.Context, m *Manager) (*Lock, error) {
			return m.Acquire(ctx, "hand", time.Minute, WithFair())
		}},
		{"fair", func(ctx context.Context, m *Manager) (*Lock, error) {
			return m.Acquire(ctx, "hand", time.Minute, WithFair())
		}},
		{"multi", func(ctx context.Context, m *Manager) (*Lock, error) {
			return m.AcquireMulti(ctx, []string{"hand", "hand2"}, time.Minute)
		}},
		{"shared", func(ctx context.Context, m *Manager) (*Lock, error) {
			return m.Acquire(ctx, "hand", time.Minute, WithShared())
		}},
	}
	var mu sync.Mutex
	var lastRelease time.Time
	var worst time.Duration
	var slow []string // the handoffs past wakeBound
	handoffs := 0
	deadline := time.Now().Add(6 * time.Second)
	var wg sync.WaitGroup
	for _, k := range kinds {
		m := managerFor(t, c, waiterOpts()...)
		wg.Go(func() {
			for time.Now().Before(deadline) {
				l, err := k.acquire(ctx, m)
				if !assert.NoError(t, err, k.who) {
					return
				}
				got := time.Now()
				mu.Lock()
				if !lastRelease.IsZero() {
					gap := got.Sub(lastRelease)
					worst = max(worst, gap)
					if gap >= wakeBound {
						slow = append(slow, fmt.Sprintf("a %s waiter took the lock %v after the last release (handoff %d)", k.who, gap, handoffs))
					}
				}
				handoffs++
				if handoffs%25 == 0 {
					for _, s := range c.Servers {
						_ = s.Client().ScriptFlush(ctx).Err()
					}
				}
				mu.Unlock()
				time.Sleep(3 * time.Millisecond)
				mu.Lock()
				lastRelease = time.Now()
				mu.Unlock()
				if err := l.Release(ctx); err != nil {
					// A shared round that lost the race left its set on a master the plain
					// lock did not win, for a moment: WRONGTYPE there, a partial release.
					assert.ErrorIs(t, err, ErrPartialRelease, k.who)
				}
				mu.Lock()
				lastRelease = time.Now() // a shared hold may overlap another: the gap counts from the last release
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	t.Logf("%d handoffs, the longest %v; past %v: %v", handoffs, worst, wakeBound, slow)
	assert.LessOrEqual(t, len(slow), 1, "wake-ups lost: %v", slow)
	assert.Greater(t, handoffs, 50)
	checkLeftKeys(t, c, "lock:hand")
}
