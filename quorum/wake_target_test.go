package quorum

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/keyspace"
	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/quorum/observe"
)

func TestWakeNames(t *testing.T) {
	tests := []struct {
		payload string
		names   string
		ok      bool
	}{
		{"lock:x", "", false},
		{keyspace.ForceExpiredMessage, "", false},
		{"lock:x\nnext T.a", "T.a", true},
		{"lock:x\nnext T.a T.b", "T.a T.b", true},
		{"lock:x\nnext ", "", false},
		{"lock:x\nnext   ", "", false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.payload), func(t *testing.T) {
			names, ok := wakeNames(tt.payload)
			assert.Equal(t, tt.names, names)
			assert.Equal(t, tt.ok, ok)
		})
	}
	assert.True(t, named("T.a T.b", "T.b"))
	assert.False(t, named("T.a T.b", "T."))
	assert.False(t, named("", ""))
}

// TestHubNotifyWakesOnlyWhomTheMessageConcerns checks the hub's dispatch: fair
// waiters A and B (of this Manager) and a plain waiter P, all on one lock.
func TestHubNotifyWakesOnlyWhomTheMessageConcerns(t *testing.T) {
	const key = "lock:n"
	m := &Manager{wakeTag: "TAGTAGTA"}
	h := &wakeHub{m: m, waiters: map[string]map[*waiter]struct{}{}, idle: map[string]time.Time{}, confirmed: map[string]map[*nodeSub]bool{},
		wide: map[string]bool{}}
	a, unA := h.register(key, "A.TAGTAGTA")
	b, unB := h.register(key, "B.TAGTAGTA")
	p, unP := h.register(key, "")
	defer func() { unA(); unB(); unP() }()
	general, own, any := wakeChannel(key), ownWakeChannel(key, m.wakeTag), anyWakeChannel(key)
	tests := []struct {
		name, ch, payload string
		want              string // who wakes, of "ABP"
	}{
		{"a plain release wakes everyone", general, key, "ABP"},
		{"a force-expire wakes everyone", general, keyspace.ForceExpiredMessage, "ABP"},
		{"a message naming nobody wakes everyone", general, key + "\nnext ", "ABP"},
		{"naming A on the channel: A and the plain waiter", general, key + "\nnext A.TAGTAGTA", "AP"},
		{"naming A on its Manager's channel: A alone", own, key + "\nnext A.TAGTAGTA", "A"},
		{"naming B and A", own, key + "\nnext B.TAGTAGTA A.TAGTAGTA", "AB"},
		{"the copy on the any channel: the plain waiter", any, key + "\nnext A.TAGTAGTA", "P"},
		{"naming another client's waiter: the plain waiter", general, key + "\nnext other", "P"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.notify(tt.ch, tt.payload, time.Now())
			got := ""
			for _, w := range []struct {
				name string
				w    *waiter
			}{{"A", a}, {"B", b}, {"P", p}} {
				select {
				case <-w.w.ch:
					got += w.name
				default:
				}
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// roundCounter counts each Manager's acquisition rounds (one EventMasterRound per
// master and round).
type roundCounter struct{ n atomic.Int64 }

func (r *roundCounter) Observe(e observe.Event) {
	if e.Kind == observe.EventMasterRound && e.Op == opAcquire {
		r.n.Add(1)
	}
}

// fairWaiters starts n fair Acquires of name, each with a Manager of its own (with
// opts and a round counter), in order: each is queued on every master (behind ahead
// waiters already there), listens on its own channel and sleeps before the next
// starts. The acquired locks arrive on the returned channel, tagged with the
// waiter's index.
func fairWaiters(t *testing.T, c *redistest.Cluster, name string, ahead, n int, opts ...Option) ([]*roundCounter, <-chan [2]any) {
	t.Helper()
	got := make(chan [2]any, n)
	counts := make([]*roundCounter, n)
	for i := range n {
		counts[i] = &roundCounter{}
		// A node timeout of 2s: the subscription is confirmed within it, so the waiter
		// always makes its second round at once (see below), however loaded the machine.
		m := managerFor(t, c, append([]Option{WithNodeTimeout(2 * time.Second)}, append(opts, WithObserver(counts[i]))...)...)
		key := m.Key(name)
		go func() {
			l, err := m.Acquire(context.Background(), name, 10*time.Second, WithFair())
			if assert.NoError(t, err, "waiter %d", i) {
				got <- [2]any{i, l}
			}
		}()
		require.Eventually(t, func() bool {
			q := queueOn(t, c, key)
			if len(q) != len(c.Servers) {
				return false
			}
			for _, s := range c.Servers {
				if len(q[s.Name]) != ahead+i+1 {
					return false
				}
			}
			h := m.runningHub()
			if h == nil {
				return false
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			return len(h.confirmed[ownWakeChannel(key, m.wakeTag)]) == h.narrowCount() // listened to on N-Q+1 masters (wake_narrow.go)
		}, 5*time.Second, 2*time.Millisecond)
		// Its first round failed; once subscribed it tried again at once: then it sleeps.
		require.Eventually(t, func() bool { return counts[i].n.Load() >= 2*int64(len(c.Servers)) }, 5*time.Second, 2*time.Millisecond,
			"waiter %d: a round, then another once subscribed", i)
		time.Sleep(5 * time.Millisecond) // distinct enqueue times
	}
	return counts, got
}

func TestFairReleaseWakesOnlyTheHead(t *testing.T) {
	for _, path := range []string{"wire", "go-redis"} {
		t.Run(path, func(t *testing.T) {
			ctx := context.Background()
			var extra []Option
			if path == "go-redis" {
				extra = append(extra, withGoRedisHot())
			}
			// A retry delay of 5s: within the test, a waiter runs a round only when woken.
			c, holder := testCluster(t, 3, append(extra, WithRetry(1000, 5*time.Second, 0))...)
			l, err := holder.Acquire(ctx, "head", 10*time.Second, WithFair())
			require.NoError(t, err)
			counts, got := fairWaiters(t, c, "head", 0, 3, append(extra, WithRetry(1000, 5*time.Second, 0))...)
			for turn := range counts {
				before := make([]int64, len(counts))
				for i := range counts {
					before[i] = counts[i].n.Load()
				}
				require.NoError(t, l.Release(ctx))
				var next [2]any
				select {
				case next = <-got:
				case <-time.After(3 * time.Second):
					t.Fatalf("turn %d: nobody woken (the retry delay is 5s)", turn)
				}
				require.Equal(t, turn, next[0], "FIFO order")
				l = next[1].(*Lock)
				time.Sleep(50 * time.Millisecond) // rounds of anyone else woken would have run by now
				// On a loaded machine the head may win on a quorum before the release
				// has reached the last master (its vote there is "foreign"); it then
				// leaves that master's queue, and the release arriving there later
				// names the new head of that queue: the next waiter gets one spurious
				// wake-up (a hint: its round fails), never a lost one. Its round wins
				// that master (the head there, the lock free) and no other: a woken round
				// granted short of a quorum, which tries again after at most maxSoon
				// short pauses (fair.go: releaseInFlight), then sleeps its retry delay.
				votes := l.Votes()
				late := votes.count(OutcomeOK) < len(votes.Nodes)
				for i := range counts {
					ran := counts[i].n.Load() - before[i]
					switch {
					case i == turn:
						assert.GreaterOrEqual(t, ran, int64(len(c.Servers)), "turn %d: the head ran a round", turn)
					case i == turn+1 && late:
						assert.LessOrEqual(t, ran, int64((1+maxSoon)*len(c.Servers)), "turn %d: waiter %d ran more than the rounds a late release on one master explains (head votes %v)", turn, i, outcomes(&votes))
					default:
						assert.Zero(t, ran, "turn %d: waiter %d was not woken (head votes %v)", turn, i, outcomes(&votes))
					}
				}
			}
			require.NoError(t, l.Release(ctx))
			assert.Empty(t, queueOn(t, c, "lock:head"))
		})
	}
}

func TestOldFormatAndForceExpireWakeEveryWaiter(t *testing.T) {
	tests := []struct {
		name string
		wake func(t *testing.T, c *redistest.Cluster, admin *Manager)
	}{
		{"an older client's release message (the lock key)", func(t *testing.T, c *redistest.Cluster, _ *Manager) {
			for _, s := range c.Servers {
				require.NoError(t, s.Client().Publish(context.Background(), "lock:old:wake", "lock:old").Err())
			}
		}},
		{"a force-expire", func(t *testing.T, _ *redistest.Cluster, admin *Manager) {
			_, err := admin.forceExpire(context.Background(), "old", "")
			require.NoError(t, err)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			c, admin := testCluster(t, 3, WithRetry(1000, 5*time.Second, 0))
			l, err := admin.Acquire(ctx, "old", 10*time.Second, WithFair())
			require.NoError(t, err)
			counts, got := fairWaiters(t, c, "old", 0, 3, WithRetry(1000, 5*time.Second, 0))
			before := make([]int64, len(counts))
			for i := range counts {
				before[i] = counts[i].n.Load()
			}
			tt.wake(t, c, admin)
			for i := range counts {
				assert.Eventually(t, func() bool { return counts[i].n.Load() > before[i] }, 2*time.Second, 5*time.Millisecond,
					"waiter %d ran a round", i)
			}
			_ = l.Release(ctx)
			for range counts {
				select {
				case next := <-got:
					require.NoError(t, next[1].(*Lock).Release(ctx))
				case <-time.After(5 * time.Second):
					t.Fatal("a waiter was never served")
				}
			}
		})
	}
}

func TestPlainWaiterWakesOnAFairRelease(t *testing.T) {
	ctx := context.Background()
	c, holder := testCluster(t, 3, WithRetry(1000, 5*time.Second, 0))
	l, err := holder.Acquire(ctx, "mixed", 10*time.Second, WithFair())
	require.NoError(t, err)
	_, got := fairWaiters(t, c, "mixed", 0, 1, WithRetry(1000, 5*time.Second, 0))
	count := &roundCounter{}
	plain := managerFor(t, c, WithRetry(1000, 5*time.Second, 0), WithNodeTimeout(2*time.Second), WithObserver(count))
	plainGot := make(chan *Lock, 1)
	go func() {
		pl, err := plain.Acquire(ctx, "mixed", 10*time.Second)
		assert.NoError(t, err)
		plainGot <- pl
	}()
	require.Eventually(t, func() bool { return count.n.Load() >= 2*int64(len(c.Servers)) }, 5*time.Second, 2*time.Millisecond,
		"the plain waiter failed, subscribed and failed again")
	time.Sleep(20 * time.Millisecond)
	before := count.n.Load()
	require.NoError(t, l.Release(ctx))
	assert.Eventually(t, func() bool { return count.n.Load() > before }, 2*time.Second, 2*time.Millisecond,
		"the plain waiter was woken (it ignores the queue, so it may even win)")
	for range 2 {
		select {
		case next := <-got:
			require.NoError(t, next[1].(*Lock).Release(ctx))
		case pl := <-plainGot:
			require.NoError(t, pl.Release(ctx))
		case <-time.After(5 * time.Second):
			t.Fatal("not served")
		}
	}
}

// Bug 10: the wake hub kept one confirmed-subscription entry per lock name when a
// master was down while the name's channel was dropped; they also looked subscribed.
func TestBug10WakeHubForgetsAMasterThatDropped(t *testing.T) {
	c, m := testCluster(t, 3)
	h := m.hub()
	var unregs []func()
	for i := range 300 {
		_, unreg := h.register(m.Key("review/10/"+strconv.Itoa(i)), "")
		unregs = append(unregs, unreg)
	}
	require.Eventually(t, func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return len(h.confirmed) == 2*300 // "<key>:wake" and "<key>:wake:any" for each
	}, 10*time.Second, 10*time.Millisecond)
	c.Servers[0].Kill()
	for _, u := range unregs {
		u()
	}
	// The names have been idle for longer than the linger: the hub drops them.
	h.mu.Lock()
	for ch := range h.idle {
		h.idle[ch] = time.Now().Add(-2 * wakeLinger)
	}
	h.mu.Unlock()
	h.kickAll()
	require.Eventually(t, func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return len(h.confirmed) == 0
	}, 10*time.Second, 10*time.Millisecond, "no channel is wanted: nothing may look subscribed")
	c.Servers[0].Restart(false)
}
