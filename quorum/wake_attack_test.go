package quorum

// Attacks on the wake-ups of waiters (a release that publishes only where
// somebody waits must still wake every kind of waiter at once): a permit's
// waiter, an election's candidate, a release racing a new waiter's first
// rounds, plain, fair and shared waiters on one name. Each waiter's retry delay
// is 5s or more: a wake-up lost shows as a wait of seconds.

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wakeAfter runs acquire in the background and returns how long after release()
// the waiter held the lock.
func wakeAfter(t *testing.T, settle time.Duration, acquire func(ctx context.Context) (*Lock, error), release func()) time.Duration {
	t.Helper()
	got := make(chan *Lock, 1)
	errc := make(chan error, 1)
	go func() {
		l, err := acquire(context.Background())
		if err != nil {
			errc <- err
			return
		}
		got <- l
	}()
	time.Sleep(settle)
	at := time.Now()
	release()
	select {
	case l := <-got:
		d := time.Since(at)
		_ = l.Release(context.Background())
		return d
	case err := <-errc:
		t.Fatalf("waiter: %v", err)
	case <-time.After(15 * time.Second):
		t.Fatal("waiter never got it")
	}
	return 0
}

func TestAttackWakePermitWaiterOnPermitRelease(t *testing.T) {
	ctx := context.Background()
	c, holder := testCluster(t, 3)
	m := managerFor(t, c, WithRetry(1000, 5*time.Second, 0), WithNodeTimeout(2*time.Second))
	for i := range 5 {
		l, err := holder.Acquire(ctx, "sem", time.Minute, withPermits(1))
		require.NoError(t, err)
		d := wakeAfter(t, 300*time.Millisecond, func(ctx context.Context) (*Lock, error) {
			return m.Acquire(ctx, "sem", time.Minute, withPermits(1))
		}, func() { require.NoError(t, l.Release(ctx)) })
		assert.Less(t, d, time.Second, "round %d: woken, not its 5s retry", i)
	}
}

func TestAttackWakeCandidateOnResign(t *testing.T) {
	ctx := context.Background()
	c, holder := testCluster(t, 3)
	m := managerFor(t, c, WithRetry(1000, 5*time.Second, 0), WithNodeTimeout(2*time.Second))
	e1, err := holder.Election("el")
	require.NoError(t, err)
	e2, err := m.Election("el")
	require.NoError(t, err)
	for i := range 3 {
		ld, err := e1.Campaign(ctx, "a", time.Minute)
		require.NoError(t, err)
		d := wakeAfter(t, 300*time.Millisecond, func(ctx context.Context) (*Lock, error) {
			l2, err := e2.Campaign(ctx, "b", time.Minute)
			if err != nil {
				return nil, err
			}
			return l2.Lock, nil
		}, func() { require.NoError(t, ld.Release(ctx)) })
		assert.Less(t, d, time.Second, "round %d: woken, not its 5s retry", i)
	}
}

// A release at a random moment around the waiter's first rounds (before it
// marked, while it subscribes, right after): never a retry delay. (A waiter
// whose subscription is not confirmed within the node timeout sleeps its retry
// delay: the node timeout is long here, so that a loaded machine does not get
// there.)
func TestAttackWakeReleaseRacingRegistration(t *testing.T) {
	ctx := context.Background()
	c, holder := testCluster(t, 3)
	worst := time.Duration(0)
	for i := range 40 {
		m := managerFor(t, c, WithRetry(1000, 10*time.Second, 0), WithNodeTimeout(5*time.Second))
		l, err := holder.Acquire(ctx, "race", time.Minute)
		require.NoError(t, err)
		d := wakeAfter(t, time.Duration(rand.IntN(8000))*time.Microsecond, func(ctx context.Context) (*Lock, error) {
			return m.Acquire(ctx, "race", time.Minute)
		}, func() { require.NoError(t, l.Release(ctx)) })
		worst = max(worst, d)
		assert.Less(t, d, 4*time.Second, "try %d: the waiter slept its 10s retry delay", i)
		_ = m.Close()
	}
	t.Logf("worst wake %v", worst)
}

// A shared waiter and a plain waiter and a fair waiter on one name.
func TestAttackWakeMixedWaitersAllServed(t *testing.T) {
	ctx := context.Background()
	c, holder := testCluster(t, 3)
	l, err := holder.Acquire(ctx, "mix", time.Minute)
	require.NoError(t, err)
	type res struct {
		who string
		at  time.Time
	}
	out := make(chan res, 3)
	var wg sync.WaitGroup
	for _, w := range []struct {
		who  string
		opts []LockOption
	}{{"plain", nil}, {"fair", []LockOption{WithFair()}}, {"shared", []LockOption{withShared()}}} {
		m := managerFor(t, c, WithRetry(1000, 5*time.Second, 0), WithNodeTimeout(2*time.Second))
		wg.Go(func() {
			wl, err := m.Acquire(ctx, "mix", time.Minute, w.opts...)
			if !assert.NoError(t, err, w.who) {
				out <- res{w.who, time.Time{}}
				return
			}
			out <- res{w.who, time.Now()}
			time.Sleep(20 * time.Millisecond)
			assert.NoError(t, wl.Release(ctx))
		})
	}
	time.Sleep(500 * time.Millisecond)
	at := time.Now()
	require.NoError(t, l.Release(ctx))
	for range 3 {
		select {
		case r := <-out:
			t.Logf("%s after %v", r.who, r.at.Sub(at))
			assert.Less(t, r.at.Sub(at), 3*time.Second, "%s slept its retry delay", r.who)
		case <-time.After(20 * time.Second):
			t.Fatal("a waiter never got it")
		}
	}
	wg.Wait()
}
