package quorum

import (
	"bytes"
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Regression tests for the bugs an attack on the lock's safety reproduced.

// lateConn delays one write that contains match by delay, as a TCP segment that was
// lost and retransmitted after the retransmission timeout is: the client's Write
// returns at once, the bytes reach the master later, and closing the socket does not
// take back what the kernel already accepted (it is still delivered, then the FIN).
type lateConn struct {
	net.Conn
	armed *atomic.Pointer[[]byte] // the pattern of the one write to delay; nil when disarmed
	delay time.Duration

	mu      sync.Mutex
	pending chan struct{} // closed when the delayed write went out
}

func (c *lateConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	pending := c.pending
	c.mu.Unlock()
	if pending != nil {
		<-pending // TCP keeps the order on one connection
	}
	if p := c.armed.Load(); p != nil && bytes.Contains(b, *p) && c.armed.CompareAndSwap(p, nil) {
		buf := append([]byte(nil), b...)
		done := make(chan struct{})
		c.mu.Lock()
		c.pending = done
		c.mu.Unlock()
		go func() {
			defer close(done)
			time.Sleep(c.delay)
			// The kernel accepted these bytes long ago: no deadline applies.
			_ = c.Conn.SetWriteDeadline(time.Time{})
			_, _ = c.Conn.Write(buf)
		}()
		return len(b), nil
	}
	return c.Conn.Write(b)
}

func (c *lateConn) Close() error {
	c.mu.Lock()
	pending := c.pending
	c.mu.Unlock()
	if pending == nil {
		return c.Conn.Close()
	}
	go func() { <-pending; _ = c.Conn.Close() }()
	return nil
}

// Attack 1: Acquire reused one lock value for all its rounds. A failed round's
// clean-up release (compare-and-delete of that value) that reaches a master late —
// a retransmitted TCP segment — deletes the key a later, successful round of the
// same Acquire set there. The lock then stands on fewer than a quorum while its
// holder believes it valid, and a rival takes it: two holders. (B holds the lock
// on b and c only, so that A's rounds are granted by a and fail: a round refused
// everywhere sends no clean-up.)
func TestAttackLateCleanupReleaseDeletesALaterRoundsKey(t *testing.T) {
	t.Parallel()
	c, _ := testCluster(t, 3)
	ctx := context.Background()
	const name = "attack/late-cleanup"
	const ttl = 3 * time.Second

	// A reaches a and b; c is unreachable for A (a quorum of 3 is 2). A's first
	// write of the release script to a is delivered 600ms late.
	var armed atomic.Pointer[[]byte]
	pat := []byte(releaseScript.Hash())
	armed.Store(&pat)
	var d net.Dialer
	nodes := make([]Node, len(c.Servers))
	for i, s := range c.Servers {
		nodes[i] = Node{Name: s.Name, Addr: s.Addr()}
		switch s.Name {
		case "a":
			nodes[i].Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
				cn, err := d.DialContext(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				return &lateConn{Conn: cn, armed: &armed, delay: 600 * time.Millisecond}, nil
			}
		case "c":
			nodes[i].Dialer = func(context.Context, string, string) (net.Conn, error) {
				return nil, errors.New("unreachable from A")
			}
		}
	}
	a, err := New(nodes, WithRestartQuarantine(0), WithNodeTimeout(100*time.Millisecond), WithRetry(100, 30*time.Millisecond, 10*time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Close() })
	rival := managerFor(t, c)
	bNodes := make([]Node, len(c.Servers))
	for i, s := range c.Servers {
		bNodes[i] = Node{Name: s.Name, Addr: s.Addr()}
		if s.Name == "a" {
			bNodes[i].Dialer = func(context.Context, string, string) (net.Conn, error) {
				return nil, errors.New("unreachable from B")
			}
		}
	}
	b, err := New(bNodes, WithRestartQuarantine(0))
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })

	// B holds the lock on b and c; A waits for it. A's failed rounds, granted
	// by a, each release their value there; the first such release is the late
	// one.
	lb, err := b.TryAcquire(ctx, name, ttl)
	require.NoError(t, err)
	type res struct {
		l   *Lock
		err error
	}
	got := make(chan res, 1)
	go func() {
		l, err := a.Acquire(ctx, name, ttl)
		got <- res{l, err}
	}()
	time.Sleep(150 * time.Millisecond) // A's first rounds failed (B holds it)
	require.Nil(t, armed.Load(), "A's clean-up release to a was sent")
	require.ErrorIs(t, lb.Release(ctx), ErrPartialRelease) // a is unreachable from B
	r := <-got
	require.NoError(t, r.err, "A acquires once B released")
	la := r.l
	t.Cleanup(func() { _ = la.Release(context.Background()) })

	// While A's lock is valid, nobody else may take it.
	for time.Now().Before(la.Until().Add(-100 * time.Millisecond)) {
		if lr, err := rival.TryAcquire(ctx, name, ttl); err == nil {
			_ = lr.Release(ctx)
			select {
			case <-la.Done():
			default:
				t.Fatalf("two holders: a rival acquired %s while A's lock was valid for %v more (keys now %v)",
					name, time.Until(la.Until()), keysOn(t, c, a.Key(name)))
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Attack 2 (liveness, not mutual exclusion): the keep-alive computed its next
// extension once per extension, from the Until of that moment. An Extend to a
// shorter TTL (which lowers Until at once) left the keep-alive asleep until the
// old schedule, far past the new Until: the lock was lost with a keep-alive on,
// though every master answered.
func TestAttackKeepAliveFollowsAShorterExtend(t *testing.T) {
	t.Parallel()
	// Acquire with retries, not TryAcquire: the first round also dials the
	// masters and reads INFO, which a loaded machine may not finish within 50 ms
	// (all three masters timed out at once in a race-detector run).
	_, m := testCluster(t, 3, WithNodeTimeout(50*time.Millisecond), WithRetry(50, 20*time.Millisecond, 10*time.Millisecond))
	ctx := context.Background()
	l, err := m.Acquire(ctx, "attack/ka-shorter", 4*time.Second, WithKeepAlive(KeepAlive{Fraction: 0.5}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Release(context.Background()) })
	time.Sleep(50 * time.Millisecond) // the keep-alive has scheduled its first extension (at ~2s)
	require.NoError(t, l.Extend(ctx, 400*time.Millisecond))
	select {
	case <-l.Done():
		t.Fatalf("the keep-alive let the lock expire %v after a shorter Extend: %v", 400*time.Millisecond, l.Err())
	case <-time.After(1500 * time.Millisecond):
	}
}

// partConn fails every write while *cut is set: a partition of one client from one
// master (commands are not delivered, the round times out or fails there).
type partConn struct {
	net.Conn
	cut *atomic.Bool
}

func (c *partConn) Write(b []byte) (int, error) {
	if c.cut.Load() {
		return 0, errors.New("partitioned")
	}
	return c.Conn.Write(b)
}

// Attack 3: an extension to a shorter TTL whose script reaches one master late
// (a retransmitted segment) is applied there after a later, longer extension
// succeeded on a bare quorum that includes that master: the key there is cut back
// to the short TTL while the holder's Until follows the long one. Once it expires,
// the lock stands on fewer than a quorum and a rival takes it: two holders.
func TestAttackLateShorterExtendUndoesALaterExtension(t *testing.T) {
	t.Parallel()
	c, _ := testCluster(t, 5)
	ctx := context.Background()
	const name = "attack/late-shorter-extend"

	var armed atomic.Pointer[[]byte]
	var cut atomic.Bool
	var d net.Dialer
	nodes := make([]Node, len(c.Servers))
	for i, s := range c.Servers {
		nodes[i] = Node{Name: s.Name, Addr: s.Addr()}
		switch s.Name {
		case "a":
			nodes[i].Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
				cn, err := d.DialContext(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				return &lateConn{Conn: cn, armed: &armed, delay: 500 * time.Millisecond}, nil
			}
		case "d", "e":
			nodes[i].Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
				if cut.Load() {
					return nil, errors.New("partitioned")
				}
				cn, err := d.DialContext(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				return &partConn{Conn: cn, cut: &cut}, nil
			}
		}
	}
	a, err := New(nodes, WithRestartQuarantine(0), WithNodeTimeout(30*time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Close() })
	b := managerFor(t, c)

	// Acquire, not TryAcquire: with a 30ms node timeout the first round also dials
	// all five masters, which a busy machine may not finish in time.
	l, err := a.Acquire(ctx, name, 3*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Release(context.Background()) })

	require.NoError(t, l.Extend(ctx, 3*time.Second)) // every master knows the script now

	// E1: shorten to 300ms; a's copy of the script arrives 500ms late.
	pat := []byte(extendScript.Hash())
	armed.Store(&pat)
	require.NoError(t, l.Extend(ctx, 300*time.Millisecond), "4 of 5 masters extended")
	require.Nil(t, armed.Load())
	// E2: A loses d and e; the extension to 3s succeeds on a, b, c.
	cut.Store(true)
	require.NoError(t, l.Extend(ctx, 3*time.Second), "a, b and c extended")
	t.Logf("A's lock valid for %v", time.Until(l.Until()))

	for time.Now().Before(l.Until().Add(-100 * time.Millisecond)) {
		if lr, err := b.TryAcquire(ctx, name, time.Second); err == nil {
			_ = lr.Release(ctx)
			select {
			case <-l.Done():
			default:
				t.Fatalf("two holders: a rival acquired %s while A's lock was valid for %v more (keys now %v)",
					name, time.Until(l.Until()), keysOn(t, c, a.Key(name)))
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Attack 4 (availability): after SCRIPT FLUSH (or a restart), the first extension
// gets NOSCRIPT and falls back to EVAL on the same connection. When one master
// hangs, the round's deadline passes while its reply is awaited; the masters read
// after it then answer NOSCRIPT within the grace, but the EVAL write fails (the
// deadline has passed), so the extension fails on every master although four of
// five answered. A keep-alive loses its lock that way.
func TestAttackNoScriptFallbackAfterAHungMaster(t *testing.T) {
	t.Parallel()
	c, m := testCluster(t, 5, WithNodeTimeout(50*time.Millisecond))
	ctx := context.Background()
	l, err := m.TryAcquire(ctx, "attack/noscript-hung", 5*time.Second)
	require.NoError(t, err)
	for _, s := range c.Servers {
		require.NoError(t, s.Client().ScriptFlush(ctx).Err())
	}
	hung := c.Servers[0] // read first: every other master's reply is read after it
	hung.Stop()
	t.Cleanup(hung.Cont)
	require.NoError(t, l.Extend(ctx, 5*time.Second), "four of five masters answer")
	hung.Cont()
	_ = l.Release(ctx)
}
