package quorum

import (
	"cmp"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// subscribers returns, per master, how many clients listen on ch there.
func subscribers(t *testing.T, c *redistest.Cluster, ch string) []int64 {
	t.Helper()
	out := make([]int64, len(c.Servers))
	for i, s := range c.Servers {
		n, err := s.Client().PubSubNumSub(context.Background(), ch).Result()
		if err == nil {
			out[i] = n[ch]
		}
	}
	return out
}

// confirmedOn returns the indexes of the masters that confirmed ch for h.
func confirmedOn(h *wakeHub, ch string) []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []int
	for i, s := range h.subs {
		if h.confirmed[ch][s] {
			out = append(out, i)
		}
	}
	return out
}

func TestFairWaiterListensOnNMinusQPlusOneMasters(t *testing.T) {
	ctx := context.Background()
	c, holder := testCluster(t, 5)
	l, err := holder.Acquire(ctx, "narrow", 10*time.Second, WithFair())
	require.NoError(t, err)
	waiter := managerFor(t, c, WithRetry(1000, 5*time.Second, 0))
	fairDone := make(chan error, 1)
	go func() {
		l, err := waiter.Acquire(ctx, "narrow", 10*time.Second, WithFair())
		if err == nil {
			err = l.Release(ctx)
		}
		fairDone <- err
	}()
	key := waiter.Key("narrow")
	own := ownWakeChannel(key, waiter.wakeTag)
	narrow := []int64{1, 1, 1, 0, 0}
	require.Eventually(t, func() bool {
		return assert.ObjectsAreEqual(narrow, subscribers(t, c, own)) && assert.ObjectsAreEqual(narrow, subscribers(t, c, wakeChannel(key)))
	}, 5*time.Second, 5*time.Millisecond, "a fair waiter's channels on the first N-Q+1 masters")

	// A plain waiter of the same name wakes on every message: its channels are
	// listened to on every master, the own channel stays narrow.
	plainDone := make(chan error, 1)
	go func() {
		l, err := waiter.Acquire(ctx, "narrow", 10*time.Second)
		if err == nil {
			err = l.Release(ctx)
		}
		plainDone <- err
	}()
	everywhere := []int64{1, 1, 1, 1, 1}
	require.Eventually(t, func() bool {
		return assert.ObjectsAreEqual(everywhere, subscribers(t, c, wakeChannel(key))) &&
			assert.ObjectsAreEqual(everywhere, subscribers(t, c, anyWakeChannel(key)))
	}, 5*time.Second, 5*time.Millisecond, "a plain waiter's channels on every master")
	assert.Equal(t, narrow, subscribers(t, c, own))

	require.NoError(t, l.Release(ctx))
	for _, done := range []chan error{fairDone, plainDone} {
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(3 * time.Second):
			t.Fatal("a waiter was not woken (the retry delay is 5s)")
		}
	}
}

// TestFairWaiterWokenPromptlyWhenMastersFail: the head of the queue is woken by the
// release (well before its retry delay of 5s) when masters fail, restart or lose
// their queue while it waits. The holder's quorum is a, d and e (b and c held by
// someone else when it won), so that of the masters the waiter listens on (a, b
// and c) only a hears the release, when it is up with its data.
func TestFairWaiterWokenPromptlyWhenMastersFail(t *testing.T) {
	moved := func(t *testing.T, h *wakeHub, own string, want []int, msg string) {
		t.Helper()
		require.Eventually(t, func() bool { return assert.ObjectsAreEqual(want, confirmedOn(h, own)) }, 10*time.Second, 5*time.Millisecond, msg)
	}
	tests := []struct {
		name  string
		args  []string      // redis-server arguments
		delay time.Duration // the waiter's retry delay; default 5s
		fault func(t *testing.T, c *redistest.Cluster, h *wakeHub, own string)
	}{
		{name: "nothing fails", fault: func(*testing.T, *redistest.Cluster, *wakeHub, string) {}},
		{name: "a killed while held: its channels move to d", fault: func(t *testing.T, c *redistest.Cluster, h *wakeHub, own string) {
			c.Servers[0].Kill()
			moved(t, h, own, []int{1, 2, 3}, "listened to on b, c and d")
		}},
		{name: "a restarted with its data while held: its channels come back", args: []string{"--appendonly", "yes", "--appendfsync", "always"},
			fault: func(t *testing.T, c *redistest.Cluster, h *wakeHub, own string) {
				c.Servers[0].Kill()
				moved(t, h, own, []int{1, 2, 3}, "listened to on b, c and d")
				c.Servers[0].Restart(true)
				moved(t, h, own, []int{0, 1, 2}, "listened to on a, b and c again")
			}},
		{name: "b flushed while held: the waiter's place there lost", fault: func(t *testing.T, c *redistest.Cluster, h *wakeHub, own string) {
			require.NoError(t, c.Servers[1].Client().FlushAll(context.Background()).Err())
		}},
		{name: "d killed while held", fault: func(t *testing.T, c *redistest.Cluster, h *wakeHub, own string) {
			c.Servers[3].Kill()
		}},
		// Not woken: the holder's key is lost on a, the only master of its quorum
		// the waiter listens on (outside Redlock's model: a master losing its data),
		// so the release reaches d and e only. The waiter takes the lock after one
		// retry delay (wake_narrow.go).
		{name: "a flushed while held: after one retry delay", delay: 300 * time.Millisecond,
			fault: func(t *testing.T, c *redistest.Cluster, h *wakeHub, own string) {
				require.NoError(t, c.Servers[0].Client().FlushAll(context.Background()).Err())
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			c := redistest.Start(t, 5, redistest.Options{Args: tt.args})
			holder := managerFor(t, c)
			key := holder.Key("prompt")
			for _, i := range []int{1, 2} {
				require.NoError(t, c.Servers[i].Client().Set(ctx, key, "someone else", time.Minute).Err())
			}
			l, err := holder.Acquire(ctx, "prompt", 20*time.Second, WithFair())
			require.NoError(t, err)
			require.Equal(t, []Outcome{OutcomeOK, OutcomeForeign, OutcomeForeign, OutcomeOK, OutcomeOK}, outcomes(&l.votes))
			for _, i := range []int{1, 2} {
				require.NoError(t, c.Servers[i].Client().Del(ctx, key).Err())
			}

			delay := cmp.Or(tt.delay, 5*time.Second)
			waiter := managerFor(t, c, WithRetry(1000, delay, 0))
			got := make(chan error, 1)
			go func() {
				l, err := waiter.Acquire(ctx, "prompt", 10*time.Second, WithFair())
				if err == nil {
					_ = l.Release(ctx) // may fail on the failed master
				}
				got <- err
			}()
			own := ownWakeChannel(key, waiter.wakeTag)
			require.Eventually(t, func() bool {
				h := waiter.runningHub()
				return h != nil && assert.ObjectsAreEqual([]int{0, 1, 2}, confirmedOn(h, own)) && len(queueOn(t, c, key)) == 5
			}, 5*time.Second, 5*time.Millisecond, "the waiter queued everywhere, listening on a, b and c")
			time.Sleep(50 * time.Millisecond) // its round after the subscription is over: it sleeps

			tt.fault(t, c, waiter.runningHub(), own)
			released := time.Now()
			_ = l.Release(ctx) // may fail on the failed master
			select {
			case err := <-got:
				require.NoError(t, err)
				assert.Less(t, time.Since(released), min(2*time.Second, delay+time.Second), "woken (or retried after %v)", delay)
			case <-time.After(4 * time.Second):
				t.Fatal("the waiter was not woken (its retry delay is 5s)")
			}
		})
	}
}

// TestFairHeadWokenBeforeTheReleaseReachedItsQuorumRetriesSoon: a head woken by the
// first master that released, whose round finds the lock still held elsewhere (the
// release on its way there, its messages possibly where the head does not listen),
// tries again after short pauses (maxSoon of them) instead of sleeping its retry
// delay out; then it sleeps. Here the other masters stay held, so every retry fails.
func TestFairHeadWokenBeforeTheReleaseReachedItsQuorumRetriesSoon(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := redistest.Start(t, 5, redistest.Options{})
	key := "lock:soon"
	require.NoError(t, c.Servers[0].Client().Set(ctx, key, "holder", time.Minute).Err())
	for _, s := range c.Servers[1:] {
		require.NoError(t, s.Client().Set(ctx, key, "someone else", time.Minute).Err())
	}
	rounds := &roundCounter{}
	waiter := managerFor(t, c, WithRetry(1000, 5*time.Second, 0), WithObserver(rounds))
	go func() { _, _ = waiter.Acquire(ctx, "soon", 10*time.Second, WithFair()) }()
	own := ownWakeChannel(key, waiter.wakeTag)
	// 8 s: the second round is the one after the subscription, or, when the
	// subscription was confirmed before the first round ended (seen once in a
	// full race-detector run), the retry after the 5 s delay.
	require.Eventually(t, func() bool {
		h := waiter.runningHub()
		return h != nil && len(confirmedOn(h, own)) == 3 && len(queueOn(t, c, key)) == 5 && rounds.n.Load() >= 10
	}, 8*time.Second, 5*time.Millisecond, "the waiter queued everywhere and subscribed, its second round made")
	time.Sleep(50 * time.Millisecond)
	before := rounds.n.Load() / 5

	// The release reaches a alone: it wakes the head, whose round wins a only.
	n, err := releaseScript.Run(ctx, c.Servers[0].Client(), []string{key, key + queueSuffix}, "holder", wakeChannel(key)).Int64()
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	want := before + 1 + maxSoon
	require.Eventually(t, func() bool { return rounds.n.Load()/5 >= want }, 2*time.Second, time.Millisecond,
		"the woken round, then %d more after short pauses (the retry delay is 5s)", maxSoon)
	time.Sleep(300 * time.Millisecond)
	assert.Equal(t, want, rounds.n.Load()/5, "then it sleeps its retry delay")
}
