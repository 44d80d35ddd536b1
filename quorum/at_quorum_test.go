package quorum

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/internal/wire"
	"github.com/redlock/redlock/quorum/observe"
)

// A master that stops answering (SIGSTOP) costs an acquisition round a few
// milliseconds once a quorum of the others granted, not the node timeout: before
// rounds ended at a quorum, each of these took the whole second.

// TestAcquisitionEndsAtAQuorumBesideAStoppedMaster: one master of five stopped,
// a node timeout of 1 s: TryAcquire, Acquire and a fair Acquire return with the
// lock in well under the timeout, the stopped master reported as not awaited,
// and the lock's validity counted from the round's start as always.
func TestAcquisitionEndsAtAQuorumBesideAStoppedMaster(t *testing.T) {
	const timeout = time.Second
	tests := []struct {
		name    string
		stopped int
		take    func(ctx context.Context, m *Manager, name string) (*Lock, error)
	}{
		{"TryAcquire", 0, func(ctx context.Context, m *Manager, name string) (*Lock, error) {
			return m.TryAcquire(ctx, name, 10*time.Second)
		}},
		{"Acquire", 4, func(ctx context.Context, m *Manager, name string) (*Lock, error) {
			return m.Acquire(ctx, name, 10*time.Second)
		}},
		{"fair Acquire", 1, func(ctx context.Context, m *Manager, name string) (*Lock, error) {
			return m.Acquire(ctx, name, 10*time.Second, WithFair())
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, m := testCluster(t, 5, WithNodeTimeout(timeout))
			ctx := context.Background()
			warm, err := tt.take(ctx, m, "warm")
			require.NoError(t, err)
			require.NoError(t, warm.Release(ctx))
			c.Servers[tt.stopped].Stop()
			defer c.Servers[tt.stopped].Cont()
			t0 := time.Now()
			l, err := tt.take(ctx, m, "at-quorum")
			took := time.Since(t0)
			require.NoError(t, err)
			t.Logf("acquired in %v", took)
			assert.Less(t, took, timeout/4)
			rep := l.Votes()
			assert.GreaterOrEqual(t, rep.Votes, m.Quorum())
			nr := rep.Nodes[tt.stopped]
			assert.Equal(t, OutcomeError, nr.Outcome)
			assert.True(t, errors.Is(nr.Err, wire.ErrNotAwaited), "the stopped master: %v", nr.Err)
			assert.False(t, l.Until().After(t0.Add(10*time.Second)), "validity counts from before the round")
			c.Servers[tt.stopped].Cont()
			require.NoError(t, l.Release(ctx))
			assert.Empty(t, nonEmpty(keysOn(t, c, l.key)), "released everywhere, the resumed master included")
		})
	}
}

// TestFairHandoffBesideAStoppedMaster: a fair waiter takes the lock a released
// holder hands it within a fraction of the node timeout while one master of five
// is stopped (its round used to wait the whole timeout on it), unless its round
// met the release half-way (two grants, two refusals: only the stopped master
// can decide it, and it waits for it once;
// TestBugFairHandoffBesideAStoppedMasterWaitsOutASplitRound).
func TestFairHandoffBesideAStoppedMaster(t *testing.T) {
	const timeout = time.Second
	c, a := testCluster(t, 5, WithNodeTimeout(timeout))
	ob := &roundLog{}
	b := managerFor(t, c, WithNodeTimeout(timeout), WithObserver(ob))
	ctx := context.Background()
	held, err := a.Acquire(ctx, "handoff", 10*time.Second, WithFair())
	require.NoError(t, err)
	got := make(chan time.Time, 1)
	go func() {
		l, err := b.Acquire(ctx, "handoff", 10*time.Second, WithFair())
		if err == nil {
			got <- time.Now()
			_ = l.Release(ctx)
		}
		close(got)
	}()
	require.Eventually(t, func() bool { return len(queueOn(t, c, "lock:handoff")) == 5 }, 5*time.Second, 5*time.Millisecond)
	c.Servers[4].Stop()
	defer c.Servers[4].Cont()
	t0 := time.Now()
	ob.reset()
	go func() { _ = held.Release(ctx) }() // waits out the stopped master: releases do not end at a quorum
	at, ok := <-got
	require.True(t, ok, "the waiter took the lock")
	took := at.Sub(t0)
	t.Logf("handed off in %v", took)
	if took < timeout/2 {
		return
	}
	waited := ob.roundsThatWaited(timeout / 2)
	t.Logf("the rounds that waited for e: %v; the waiter's master answers: %s", waited, ob.String())
	assert.Less(t, took, timeout+timeout/2, "the waiter waited for e more than once")
	require.NotEmpty(t, waited, "a handoff of %v with no round that waited for e", took)
	for _, r := range waited {
		assert.True(t, r.ok < 3 && r.foreign < 3, "a round decided without e waited for it: %+v", r)
	}
}

// nonEmpty keeps the masters where a key has a value.
func nonEmpty(vals map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range vals {
		if v != "" {
			out[k] = v
		}
	}
	return out
}

// notAwaitedCount counts the acquisition rounds' master answers, and those that
// were master errors (with no master down: not awaited).
type notAwaitedCount struct{ answers, errors atomic.Int64 }

func (o *notAwaitedCount) Observe(e observe.Event) {
	if e.Kind == observe.EventMasterRound && e.Op == opAcquire {
		o.answers.Add(1)
		if e.Outcome == OutcomeError.String() {
			o.errors.Add(1)
		}
	}
}

// BenchmarkNotAwaited measures how often a running master answers an acquisition
// round too late to be awaited once a quorum granted (reported as a master error):
// g goroutines take and release locks of distinct names on five masters for 2 s
// each.
//
//	go test ./quorum -run '^$' -bench NotAwaited -benchtime 1x
func BenchmarkNotAwaited(b *testing.B) {
	for _, g := range []int{1, 8, 64, 256} {
		b.Run("g="+strconv.Itoa(g), func(b *testing.B) {
			c := redistest.Start(b, 5, redistest.Options{})
			nodes := make([]Node, len(c.Servers))
			for i, s := range c.Servers {
				nodes[i] = Node{Name: s.Name, Addr: s.Addr()}
			}
			o := &notAwaitedCount{}
			m, err := New(nodes, WithRestartQuarantine(0), WithObserver(o))
			require.NoError(b, err)
			defer m.Close()
			ctx := context.Background()
			for range b.N {
				var wg sync.WaitGroup
				end := time.Now().Add(2 * time.Second)
				for i := range g {
					wg.Go(func() {
						for n := 0; time.Now().Before(end); n++ {
							if l, err := m.TryAcquire(ctx, "na."+strconv.Itoa(i)+"."+strconv.Itoa(n%10), time.Minute); err == nil {
								_ = l.Release(ctx)
							}
						}
					})
				}
				wg.Wait()
			}
			b.ReportMetric(float64(o.answers.Load())/float64(b.N), "answers/op")
			b.ReportMetric(100*float64(o.errors.Load())/float64(max(o.answers.Load(), 1)), "not-awaited-%")
		})
	}
}
