package quorum

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// trackerIDs returns the client ids of the tracking connections on s (CLIENT
// LIST: flag t).
func trackerIDs(t *testing.T, s *redistest.Server) []string {
	t.Helper()
	out, err := s.Client().ClientList(context.Background()).Result()
	require.NoError(t, err)
	var ids []string
	for _, line := range strings.Split(out, "\n") {
		var id, flags string
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, "id="); ok {
				id = v
			}
			if v, ok := strings.CutPrefix(f, "flags="); ok {
				flags = v
			}
		}
		if strings.Contains(flags, "t") && id != "" {
			ids = append(ids, id)
		}
	}
	return ids
}

// TestAttackLossWatchHostileAdminsAreNoLoss: while holders of every kind hold on
// five masters, hostile clients with admin rights kill the watch's tracking
// connections in a loop, redirect their own tracking (BCAST, every key) onto
// the watch's connections and write keys with CR, LF and binary in their names
// and keys longer than the watch reads, FLUSHALL one master and delete every
// held key on another. Every lock keeps a quorum (3 of 5), so no holder may see
// Done; every lock still verifies at the end.
func TestAttackLossWatchHostileAdminsAreNoLoss(t *testing.T) {
	c, m := testCluster(t, 5)
	ctx := context.Background()
	var locks []*Lock
	for _, k := range lossKinds {
		l, _ := k.take(t, m)
		armed(t, m, l)
		locks = append(locks, l)
		t.Cleanup(func() { _ = l.Release(context.Background()) })
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var kills, writes atomic.Int64
	for i, s := range c.Servers {
		wg.Go(func() { // kill the tracking connections, again and again
			for {
				select {
				case <-stop:
					return
				case <-time.After(time.Duration(20+10*i) * time.Millisecond):
				}
				for _, id := range trackerIDs(t, s) {
					if s.Client().Do(ctx, "CLIENT", "KILL", "ID", id).Err() == nil {
						kills.Add(1)
					}
				}
			}
		})
		wg.Go(func() { // redirect a hostile tracking onto the watch's connection, and write
			hc := redis.NewClient(&redis.Options{Addr: s.Addr(), Protocol: 2})
			defer hc.Close()
			hctx := context.Background()
			for j := 0; ; j++ {
				select {
				case <-stop:
					return
				default:
				}
				if ids := trackerIDs(t, s); len(ids) > 0 {
					_ = hc.Do(hctx, "CLIENT", "TRACKING", "OFF").Err()
					_ = hc.Do(hctx, "CLIENT", "TRACKING", "ON", "REDIRECT", ids[0], "BCAST").Err()
				}
				p := hc.Pipeline()
				for _, l := range locks {
					p.Set(hctx, l.watchKeys()[0]+"\r\n>2\r\n$10\r\ninvalidate", "x", time.Second)
				}
				p.Set(hctx, m.Key(fmt.Sprintf("bin\x00\xff\r\n%d", j%7)), "rl1.x.y", time.Second)
				p.Set(hctx, m.Key(strings.Repeat("L", 600)), "v", time.Second)
				p.Set(hctx, strings.Repeat("K", 70000), "v", time.Second)
				_, _ = p.Exec(hctx)
				writes.Add(1)
				time.Sleep(time.Millisecond)
			}
		})
	}
	time.Sleep(time.Second)
	require.NoError(t, c.Servers[4].Client().FlushAll(ctx).Err())
	for _, l := range locks {
		require.NoError(t, c.Servers[3].Client().Del(ctx, l.watchKeys()...).Err())
	}
	time.Sleep(3 * time.Second)
	close(stop)
	wg.Wait()
	t.Logf("%d tracking connections killed, %d hostile pipelines", kills.Load(), writes.Load())
	require.Positive(t, kills.Load())
	for _, l := range locks {
		require.NoError(t, l.Err(), "%s gave up a lock it holds on 3 of 5 masters", l.Name())
		require.NoError(t, l.Verify(ctx), "%s still held on a quorum", l.Name())
	}
	// The watch still hears a real loss afterwards.
	l := locks[0]
	for _, s := range c.Servers[:3] {
		require.NoError(t, s.Client().Del(ctx, l.Key()).Err())
	}
	select {
	case <-l.Done():
		require.ErrorIs(t, l.Err(), ErrLost)
	case <-time.After(trackPoll + 3*time.Second):
		t.Fatal("after the hostile clients stopped, a loss on 3 of 5 masters went unheard")
	}
}
