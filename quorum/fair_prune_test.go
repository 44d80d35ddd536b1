package quorum

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The scripts find the head and drop expired waiters in one read (wake_head.lua's
// liveHead): expired heartbeats sort before the queue, so one ZRANGEBYSCORE from
// -now returns them and then the head. These tests put more expired waiters ahead
// than one read takes (16), and an expired waiter's place right behind its
// heartbeat, where the read meets it.

// deadAhead returns n waiters whose heartbeat expired, then the waiters given.
func deadAhead(n int, live ...queued) []queued {
	ws := make([]queued, 0, n+len(live))
	for i := range n {
		ws = append(ws, queued{id: fmt.Sprintf("dead%02d.%s", i, tTag)})
	}
	return append(ws, live...)
}

func TestFairScriptsDropExpiredWaitersBeyondOneRead(t *testing.T) {
	ctx := context.Background()
	c, _ := testCluster(t, 1)
	cl := c.Servers[0].Client()
	me, next := "me."+tTag, "next."+tTag
	named := func(id string) string { return tKey + "\nnext " + id }
	for _, dead := range []int{1, 15, 16, 17, 40} {
		t.Run(fmt.Sprintf("%d expired ahead", dead), func(t *testing.T) {
			t.Run("fair_acquire: the first live waiter is the head", func(t *testing.T) {
				require.NoError(t, cl.Del(ctx, tKey).Err())
				fillQueue(t, cl, deadAhead(dead, queued{next, true})...)
				// me enqueues behind next: refused, every expired waiter dropped.
				r, err := fairAcquireScript.Run(ctx, cl, []string{tKey, tQueue}, "v", "60000", me, "100000", "60000", "wait").Int64()
				require.NoError(t, err)
				assert.Equal(t, int64(-2), r)
				q, err := cl.ZRangeArgs(ctx, zrange0(tQueue)).Result()
				require.NoError(t, err)
				assert.Equal(t, []string{"q:" + next, "q:" + me}, q)
				// next is the head: it takes the lock and leaves the queue.
				r, err = fairAcquireScript.Run(ctx, cl, []string{tKey, tQueue}, "v2", "60000", next, "1", "60000", "wait").Int64()
				require.NoError(t, err)
				assert.Equal(t, int64(1), r)
			})
			t.Run("fair_acquire: only expired waiters ahead, the lock is taken", func(t *testing.T) {
				require.NoError(t, cl.Del(ctx, tKey).Err())
				fillQueue(t, cl, deadAhead(dead)...)
				r, err := fairAcquireScript.Run(ctx, cl, []string{tKey, tQueue}, "v", "60000", me, "100000", "60000", "wait").Int64()
				require.NoError(t, err)
				assert.Equal(t, int64(1), r)
				assert.Zero(t, cl.Exists(ctx, tQueue).Val(), "nothing left queued")
			})
			t.Run("release: the first live waiter is woken", func(t *testing.T) {
				fillQueue(t, cl, deadAhead(dead, queued{next, true}, queued{me, true})...)
				require.NoError(t, cl.Set(ctx, tKey, "ours", time.Minute).Err())
				pubs := published(t, cl, true, func() {
					require.NoError(t, releaseScript.Run(ctx, cl, []string{tKey, tQueue}, "ours", tChan).Err())
				})
				assert.Equal(t, map[string][]string{tOwn: {named(next)}, tAny: {named(next)}}, pubs)
				assert.Equal(t, int64(4), cl.ZCard(ctx, tQueue).Val(), "two live waiters left, with their heartbeats")
			})
			t.Run("leave: the head leaving wakes the next live waiter, not itself", func(t *testing.T) {
				require.NoError(t, cl.Del(ctx, tKey).Err())
				fillQueue(t, cl, append([]queued{{me, true}}, deadAhead(dead, queued{next, true})...)...)
				pubs := published(t, cl, true, func() {
					require.NoError(t, goRedisScript(fairLeaveScript).Run(ctx, cl, []string{tKey, tQueue}, me, tChan).Err())
				})
				assert.Equal(t, map[string][]string{tOwn: {named(next)}, tAny: {named(next)}}, pubs)
			})
		})
	}
}
