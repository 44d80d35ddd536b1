package quorum

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/faults"
	"github.com/redlock/redlock/internal/redistest"
)

// dialGate holds back the new connections of a client to one master while it is
// shut (a slow dial, a subscription that reaches the master late); the
// connections already open keep working.
type dialGate struct {
	shut atomic.Bool
	open chan struct{}
}

func newDialGate() *dialGate { return &dialGate{open: make(chan struct{})} }

func (g *dialGate) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if g.shut.Load() {
		select {
		case <-g.open:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// Regression: a waiter subscribes on every master, and its marking round ran as
// soon as one master confirmed the subscription. A release on another master after
// that round (which marked there, so the release published) but before that master
// subscribed the waiter published to nobody, and the later confirmation did not
// start another round: the waiter slept its whole retry delay though the lock was
// free. Here the holder holds b and c (a was unreachable when it acquired), the
// waiter's subscriptions to b and c are held back until after the release, and the
// waiter must hold the lock soon after they are in place.
func TestBugLostWakeUpReleaseBeforeTheSubscriptionWasConfirmed(t *testing.T) {
	const retry = 10 * time.Second
	ctx := context.Background()
	c := redistest.Start(t, 3, redistest.Options{})
	proxies := make([]*faults.Proxy, len(c.Servers))
	for i, s := range c.Servers {
		proxies[i] = faults.NewProxy(t, s.Addr())
	}
	holder := managerVia(t, c, func(i int, n *Node) { n.Dialer = proxies[i].Dial })
	proxies[0].Blackhole()
	l, err := holder.Acquire(ctx, "late", time.Minute)
	require.NoError(t, err)
	proxies[0].Heal()
	held := keysOn(t, c, "lock:late")
	require.Equal(t, map[string]string{c.Servers[1].Name: l.value, c.Servers[2].Name: l.value}, held,
		"the holder holds b and c only")

	gates := []*dialGate{nil, newDialGate(), newDialGate()}
	waiter := managerVia(t, c, func(i int, n *Node) {
		if gates[i] != nil {
			n.Dialer = gates[i].dial
		}
	}, WithRetry(1000, retry, 0), WithNodeTimeout(300*time.Millisecond))
	// The waiter's round connections are open before the gates shut: only
	// its subscription connections to b and c wait.
	warm, err := waiter.TryAcquire(ctx, "warm", time.Minute)
	require.NoError(t, err)
	require.NoError(t, warm.Release(ctx))
	for _, g := range gates[1:] {
		g.shut.Store(true)
	}

	got := make(chan *Lock, 1)
	go func() {
		wl, err := waiter.Acquire(ctx, "late", time.Minute)
		assert.NoError(t, err)
		got <- wl
	}()
	// The waiter's marker on b and c: its marking round ran there, behind the
	// holder's key.
	require.Eventually(t, func() bool {
		for _, s := range c.Servers[1:] {
			if n, err := s.Client().ZCard(ctx, "lock:late:queue").Result(); err != nil || n == 0 {
				return false
			}
		}
		return true
	}, 5*time.Second, 5*time.Millisecond, "the waiter marked b and c")
	require.NoError(t, l.Release(ctx))
	at := time.Now()
	for _, g := range gates[1:] {
		close(g.open)
	}
	select {
	case wl := <-got:
		require.NotNil(t, wl)
		d := time.Since(at)
		t.Logf("the waiter held the lock %v after the release", d)
		assert.Less(t, d, retry/2, "the waiter slept its retry delay: the release's wake-up was lost")
		mine := 0
		for _, v := range keysOn(t, c, "lock:late") {
			if v == wl.value {
				mine++
			}
		}
		assert.GreaterOrEqual(t, mine, 2, "the masters hold the waiter's lock on a quorum")
		assert.NoError(t, wl.Release(ctx))
	case <-time.After(2 * retry):
		t.Fatal("the waiter never got the lock")
	}
}
