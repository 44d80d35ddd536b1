package quorum

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/internal/wire"
)

// withSubmitted sets the wire transport's Submitted hook: f is called after each
// master got a round's command, in the order they get it.
func withSubmitted(f func(i int, cmd *wire.Cmd)) Option {
	return func(c *config) { c.submitted = f }
}

// A holder's release is written to the masters one after the other. When its
// thread stops after the first write (preempted by the master it has just woken,
// on a busy machine), that master runs the release and publishes the wake-up at
// once. If the head of the queue listens there, its round reaches the other
// masters before the release does, is refused by them (the holder's key is still
// there), and the head pays for a failed round, its clean-up and a pause before
// it tries again. The release now goes to the masters the waiters listen on (the
// first ones, wake_narrow.go) last: the head is woken only once the release is on
// its way to every master, and its first round wins.
func TestBugFairHeadWokenBeforeTheReleaseWasSentToTheOthers(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := redistest.Start(t, 5, redistest.Options{})
	var hold atomic.Bool
	first := make(chan int, 1)
	holder := managerFor(t, c, withSubmitted(func(i int, cmd *wire.Cmd) {
		if cmd.Script == releaseW && hold.CompareAndSwap(true, false) {
			first <- i
			time.Sleep(60 * time.Millisecond) // the holder's thread stopped after its first write
		}
	}))
	// Once first, so that the masters know the release script: a NOSCRIPT would
	// send it again after the pause.
	l, err := holder.Acquire(ctx, "order", 10*time.Second, WithFair())
	require.NoError(t, err)
	require.NoError(t, l.Release(ctx))
	l, err = holder.Acquire(ctx, "order", 10*time.Second, WithFair())
	require.NoError(t, err)

	rounds := &roundCounter{}
	waiter := managerFor(t, c, WithRetry(1000, 5*time.Second, 0), WithObserver(rounds))
	got := make(chan *Lock, 1)
	go func() {
		wl, err := waiter.Acquire(ctx, "order", 10*time.Second, WithFair())
		if err == nil {
			got <- wl
		}
	}()
	key := holder.Key("order")
	own := ownWakeChannel(key, waiter.wakeTag)
	require.Eventually(t, func() bool {
		h := waiter.runningHub()
		return h != nil && len(confirmedOn(h, own)) == 3 && len(queueOn(t, c, key)) == 5 && rounds.n.Load() >= 10
	}, 5*time.Second, 5*time.Millisecond, "the waiter queued everywhere and subscribed, its second round made")
	time.Sleep(50 * time.Millisecond)
	before := rounds.n.Load() / 5

	hold.Store(true)
	require.NoError(t, l.Release(ctx))
	var wl *Lock
	select {
	case wl = <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("the head did not take the lock after the release")
	}
	defer func() { _ = wl.Release(ctx) }()
	at := <-first
	assert.Equal(t, before+1, rounds.n.Load()/5,
		"the head's first round after the release wins (the release went to master %d first)", at)
}
