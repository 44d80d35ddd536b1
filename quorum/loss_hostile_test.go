package quorum

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redlock/redlock/internal/keyspace"
	"github.com/stretchr/testify/require"
)

// TestLossWatchHostileFloodIsNoLoss: a client of the masters floods what the
// loss watch listens to (the wake-up channels of the held names, the channel
// __redis__:invalidate of REDIRECT tracking, SET and DEL of other keys under the
// prefix) while holders of
// every kind hold. No holder may give up a lock it still holds on every master,
// and the work a flood causes is bounded: the holders keep verifying, at most
// one round in flight each, and the masters keep answering.
func TestLossWatchHostileFloodIsNoLoss(t *testing.T) {
	c, m := testCluster(t, 5)
	var locks []*Lock
	for _, k := range lossKinds {
		l, _ := k.take(t, m)
		locks = append(locks, l)
	}
	time.Sleep(100 * time.Millisecond)
	var sent atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, s := range c.Servers {
		cl := s.Client()
		wg.Go(func() {
			ctx := context.Background()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				p := cl.Pipeline()
				for _, l := range locks {
					for _, k := range l.watchKeys() {
						p.Publish(ctx, wakeChannel(k), k)
						p.Publish(ctx, wakeChannel(k), keyspace.ForceExpiredMessage)
					}
				}
				p.Publish(ctx, "__redis__:invalidate", m.Key("mx"))
				p.Set(ctx, m.Key(fmt.Sprintf("other%d", i%50)), "rl1.x.y", time.Second)
				p.Del(ctx, m.Key(fmt.Sprintf("other%d", (i+25)%50)))
				_, _ = p.Exec(ctx)
				sent.Add(1)
			}
		})
	}
	time.Sleep(2 * time.Second)
	close(stop)
	wg.Wait()
	t.Logf("flood: %d pipelines of hostile commands per master", sent.Load()/int64(len(c.Servers)))
	for _, l := range locks {
		require.NoError(t, l.Err(), "%s gave up a lock it holds", l.Name())
		require.NoError(t, l.Verify(context.Background()), "%s still held on the masters", l.Name())
		require.NoError(t, l.Release(context.Background()))
	}
}

// TestLossWatchSharedChurnIsNoLoss: other shared holders joining and leaving
// change the holders' set, which invalidates it for every watching holder; the
// watch reads its own member again and gives up nothing.
func TestLossWatchSharedChurnIsNoLoss(t *testing.T) {
	_, m := testCluster(t, 5)
	ctx := context.Background()
	l, err := m.Acquire(ctx, "rw", 30*time.Second, withShared(), WithLossWatch())
	require.NoError(t, err)
	armed(t, m, l)
	for range 50 {
		o, err := m.Acquire(ctx, "rw", 30*time.Second, withShared(), WithLossWatch())
		require.NoError(t, err)
		require.NoError(t, o.Release(ctx))
	}
	time.Sleep(100 * time.Millisecond)
	require.NoError(t, l.Err())
	require.NoError(t, l.Release(ctx))
}

// TestLossWatchFlushOfManyLocks: FLUSHALL on a quorum under 500 watched locks
// (one null invalidation per master) ends every one of them, each verified.
func TestLossWatchFlushOfManyLocks(t *testing.T) {
	c, m := testCluster(t, 5)
	ctx := context.Background()
	var locks []*Lock
	for i := range 500 {
		l, err := m.Acquire(ctx, fmt.Sprintf("many/%d", i), 30*time.Second, WithLossWatch())
		require.NoError(t, err)
		locks = append(locks, l)
	}
	armed(t, m, locks[len(locks)-1])
	at := time.Now()
	for _, s := range c.Servers[:3] {
		require.NoError(t, s.Client().FlushAll(ctx).Err())
	}
	for _, l := range locks {
		select {
		case <-l.Done():
			require.ErrorIs(t, l.Err(), ErrLost)
		case <-time.After(10 * time.Second):
			t.Fatalf("%s not ended 10s after the flush", l.Name())
		}
	}
	t.Logf("500 locks ended %v after the flush", time.Since(at))
}
