package quorum

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// With targeted wake-ups, a head that does not take the lock must not stall the
// queue beyond the documented bound, and the queue stays safe under faults.

// TestFairHeadGoneDoesNotStallTheQueue: the head of the queue dies (SIGKILL), is
// stopped (SIGSTOP: its wake-up is delivered, nothing acts on it), or gives up right
// at the release. The waiter behind it gets the lock within the documented bound:
// the head's heartbeat TTL plus one retry delay, or at once when the head left.
func TestFairHeadGoneDoesNotStallTheQueue(t *testing.T) {
	const delay, jitter = 50 * time.Millisecond, 20 * time.Millisecond
	tests := []struct {
		name  string
		child bool                    // the head is a child process
		gone  func(*exec.Cmd, func()) // ends the head: signal the child, or cancel its context
		bound func(m *Manager) time.Duration
	}{
		// A signal takes effect when the child's threads next run: on a busy
		// machine one of them may still act on the release's wake-up and take the
		// lock (a holder then, for its 30 s TTL). The release waits for the child
		// to be gone or stopped, as the case means.
		{"head killed", true, func(c *exec.Cmd, _ func()) { _ = c.Process.Kill(); _ = c.Wait() },
			func(m *Manager) time.Duration { return m.heartbeatTTL() + delay + jitter + 500*time.Millisecond }},
		{"head stopped, its context never polled", true, func(c *exec.Cmd, _ func()) {
			_ = c.Process.Signal(syscall.SIGSTOP)
			waitStopped(c.Process.Pid)
		},
			func(m *Manager) time.Duration { return m.heartbeatTTL() + delay + jitter + 500*time.Millisecond }},
		{"head's context cancelled just before the release", false, func(_ *exec.Cmd, cancel func()) { cancel() },
			func(*Manager) time.Duration { return 500 * time.Millisecond }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			c, m := testCluster(t, 3, WithRetry(1000, delay, jitter))
			holder, err := m.Acquire(ctx, "gone", 30*time.Second, WithFair())
			require.NoError(t, err)
			var child *exec.Cmd
			cancel := func() {}
			if tt.child {
				child = exec.Command(os.Args[0], "-test.run=^TestFairWakeChild$")
				child.Env = append(os.Environ(), "REDLOCK_FAIR_WAKE_CHILD="+strings.Join(c.Addrs(), ","))
				require.NoError(t, child.Start())
				t.Cleanup(func() {
					if child.ProcessState == nil { // not reaped by the case
						_ = child.Process.Kill()
						_ = child.Wait()
					}
				})
			} else {
				var hctx context.Context
				hctx, cancel = context.WithCancel(ctx)
				head := managerFor(t, c, WithRetry(1000, 5*time.Second, 0))
				go func() {
					if l, err := head.Acquire(hctx, "gone", 30*time.Second, WithFair()); err == nil {
						_ = l.Release(ctx) // it won the race with its cancellation
					}
				}()
			}
			require.Eventually(t, func() bool { return len(queueOn(t, c, "lock:gone")["c"]) == 1 }, 10*time.Second, 2*time.Millisecond)
			time.Sleep(20 * time.Millisecond)                           // the head subscribed; distinct enqueue times
			next := managerFor(t, c, WithRetry(1000, 5*time.Second, 0)) // woken, or its 5s delay
			if tt.child {
				next = m // the bound counts on the retry delay
			}
			// The goroutine reports to the test, never to t: it may end after the
			// test has (a failed wait below), when t must not be used.
			type result struct {
				l   *Lock
				err error
			}
			got := make(chan result, 1)
			go func() {
				l, err := next.Acquire(ctx, "gone", 30*time.Second, WithFair())
				got <- result{l, err}
			}()
			require.Eventually(t, func() bool { return len(queueOn(t, c, "lock:gone")["c"]) == 2 }, 5*time.Second, 2*time.Millisecond)
			time.Sleep(20 * time.Millisecond)
			tt.gone(child, cancel)
			t0 := time.Now()
			require.NoError(t, holder.Release(ctx))
			select {
			case r := <-got:
				require.NoError(t, r.err)
				assert.Less(t, time.Since(t0), tt.bound(m), "served within the bound")
				require.NoError(t, r.l.Release(ctx))
			case <-time.After(tt.bound(m) + 5*time.Second):
				t.Fatalf("queue stuck behind its head; the masters hold:\n%s", fairStateOn(c, "lock:gone"))
			}
		})
	}
}

// TestFairHeadLeavingAfterItWasNamedWakesTheNext: the release named the head, which
// gives up instead of taking the lock (its context ended): its leaving wakes the
// next waiter, which does not wait out its retry delay (5s here).
func TestFairHeadLeavingAfterItWasNamedWakesTheNext(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3, WithRetry(1000, 5*time.Second, 0))
	holder, err := m.Acquire(ctx, "named", 30*time.Second, WithFair())
	require.NoError(t, err)
	// The head: a waiter of m, queued everywhere, that never acts on its wake-up.
	head, err := m.newFairWaiter(false)
	require.NoError(t, err)
	head.score = "1"
	hb := -float64(time.Now().Add(time.Minute).UnixMilli())
	for _, s := range c.Servers {
		require.NoError(t, s.Client().ZAdd(ctx, "lock:named:queue", zmember(1, "q:"+head.id), zmember(hb, "h:"+head.id)).Err())
	}
	_, got := fairWaiters(t, c, "named", 1, 1, WithRetry(1000, 5*time.Second, 0))
	require.NoError(t, holder.Release(ctx)) // names the head, which sleeps on
	select {
	case <-got:
		t.Fatal("the waiter behind the head took the lock")
	case <-time.After(100 * time.Millisecond):
	}
	t0 := time.Now()
	m.leave(ctx, "lock:named", head)
	select {
	case g := <-got:
		assert.Less(t, time.Since(t0), time.Second, "woken by the head's leaving")
		require.NoError(t, g[1].(*Lock).Release(ctx))
	case <-time.After(10 * time.Second):
		t.Fatal("never served")
	}
}

// TestFairWakeChild is the head that TestFairHeadGoneDoesNotStallTheQueue kills or
// stops; it does nothing unless started by it.
func TestFairWakeChild(t *testing.T) {
	addrs := os.Getenv("REDLOCK_FAIR_WAKE_CHILD")
	if addrs == "" {
		return
	}
	var nodes []Node
	for i, a := range strings.Split(addrs, ",") {
		nodes = append(nodes, Node{Name: string(rune('a' + i)), Addr: a})
	}
	// The same heartbeat TTL as the parent's Manager (managerFor's node timeout).
	m, err := New(nodes, WithRestartQuarantine(0), WithNodeTimeout(200*time.Millisecond), WithRetry(1000, 50*time.Millisecond, 20*time.Millisecond))
	require.NoError(t, err)
	_, err = m.Acquire(context.Background(), "gone", 30*time.Second, WithFair())
	t.Fatalf("the child was not killed while waiting (%v)", err)
}

// TestFairContentionWithAMasterPaused: fair clients contend while one master of
// five is paused and resumed: never two holders, everyone served, no queue left.
func TestFairContentionWithAMasterPaused(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t, 5, redistest.Options{})
	const clients, ops = 4, 10
	var holders, maxHolders, done atomic.Int32
	var wg sync.WaitGroup
	for range clients {
		m := managerFor(t, c, WithRetry(1000, 30*time.Millisecond, 10*time.Millisecond), WithNodeTimeout(50*time.Millisecond))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range ops {
				actx, cancel := context.WithTimeout(ctx, 20*time.Second)
				l, err := m.Acquire(actx, "paused", 2*time.Second, WithFair())
				cancel()
				if !assert.NoError(t, err) {
					return
				}
				n := holders.Add(1)
				for old := maxHolders.Load(); n > old && !maxHolders.CompareAndSwap(old, n); old = maxHolders.Load() {
				}
				time.Sleep(time.Millisecond)
				holders.Add(-1)
				done.Add(1)
				_ = l.Release(ctx)
			}
		}()
	}
	require.Eventually(t, func() bool { return done.Load() >= clients*ops/4 }, 20*time.Second, time.Millisecond)
	c.Servers[2].Stop()
	require.Eventually(t, func() bool { return done.Load() >= clients*ops/2 }, 20*time.Second, time.Millisecond)
	c.Servers[2].Cont()
	wg.Wait()
	assert.EqualValues(t, 1, maxHolders.Load(), "never two holders")
	assert.EqualValues(t, clients*ops, done.Load())
	assert.Eventually(t, func() bool { return len(queueOn(t, c, "lock:paused")) == 0 }, 5*time.Second, 20*time.Millisecond)
}

// fairStateOn describes a fair lock's key and queue on every master (members with
// their scores, the server's time), for a failure's message.
func fairStateOn(c *redistest.Cluster, key string) string {
	ctx := context.Background()
	var b strings.Builder
	for _, s := range c.Servers {
		cl := s.Client()
		now, _ := cl.Time(ctx).Result()
		val, verr := cl.Get(ctx, key).Result()
		pttl, _ := cl.PTTL(ctx, key).Result()
		zs, zerr := cl.ZRangeWithScores(ctx, key+queueSuffix, 0, -1).Result()
		fmt.Fprintf(&b, "%s: now %d ms; %s = %q (%v, pttl %v); queue (%v):", s.Name, now.UnixMilli(), key, val, verr, pttl, zerr)
		for _, z := range zs {
			fmt.Fprintf(&b, " %v=%.0f", z.Member, z.Score)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// waitStopped returns when every thread of process pid is stopped (state T in
// /proc), or after 10 s.
func waitStopped(pid int) {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
		if err != nil || len(tasks) == 0 {
			return // no /proc: nothing to wait on
		}
		stopped := true
		for _, f := range tasks {
			b, err := os.ReadFile(f)
			// The state follows the command's closing parenthesis: "pid (comm) T ...".
			if i := bytes.LastIndexByte(b, ')'); err == nil && i >= 0 && i+2 < len(b) && b[i+2] != 'T' {
				stopped = false
				break
			}
		}
		if stopped {
			return
		}
	}
}
