package quorum

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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
						p.Publish(ctx, wakeChannel(k), ForceExpiredMessage)
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
