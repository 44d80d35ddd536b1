package quorum

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The scripts' side of targeted wake-ups (wake_target.go): what release.lua,
// fair_leave.lua and fair_unwind.lua publish, and where.

const (
	tKey   = "lock:w"
	tQueue = "lock:w:queue"
	tChan  = "lock:w:wake"
	tTag   = "TAGTAGTA"
	tOwn   = tChan + ":" + tTag
	tAny   = tChan + ":any"
	tEnd   = "lock:w:end" // a sentinel: every message published before it has been read
)

// queued describes one waiter put in the test queue: its id and whether its
// heartbeat is still alive.
type queued struct {
	id    string
	alive bool
}

// fillQueue replaces the queue with ws, in order (score 100, 101, ...).
func fillQueue(t *testing.T, cl *redis.Client, ws ...queued) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, cl.Del(ctx, tQueue).Err())
	for i, w := range ws {
		hb := float64(-1) // expired long ago
		if w.alive {
			hb = -float64(time.Now().Add(time.Minute).UnixMilli())
		}
		require.NoError(t, cl.ZAdd(ctx, tQueue, zmember(float64(100+i), "q:"+w.id), zmember(hb, "h:"+w.id)).Err())
	}
}

// published runs op with subscriptions to the general, "any" and (when own) the
// Manager's own channel, and returns what was published on each, by channel.
func published(t *testing.T, cl *redis.Client, own bool, op func()) map[string][]string {
	t.Helper()
	ctx := context.Background()
	chans := []string{tChan, tAny, tEnd}
	if own {
		chans = append(chans, tOwn)
	}
	ps := cl.Subscribe(ctx, chans...)
	defer ps.Close()
	for range chans {
		_, err := ps.ReceiveTimeout(ctx, 2*time.Second) // the confirmations
		require.NoError(t, err)
	}
	op()
	require.NoError(t, cl.Publish(ctx, tEnd, "").Err())
	out := map[string][]string{}
	for {
		msg, err := ps.ReceiveTimeout(ctx, 2*time.Second)
		require.NoError(t, err)
		m, ok := msg.(*redis.Message)
		require.True(t, ok, "%T", msg)
		if m.Channel == tEnd {
			return out
		}
		out[m.Channel] = append(out[m.Channel], m.Payload)
	}
}

func TestReleaseScriptWakesTheHead(t *testing.T) {
	ctx := context.Background()
	c, _ := testCluster(t, 1)
	cl := c.Servers[0].Client()
	a, b := "a."+tTag, "b."+tTag
	named := func(id string) string { return tKey + "\nnext " + id }
	tests := []struct {
		name   string
		queue  []queued
		own    bool     // the head's Manager listens on its own channel
		keys   []string // default: the lock and queue keys
		lock   string   // the key's value before the release; default ours
		ch     string   // default tChan
		want   int64
		pubs   map[string][]string
		remain int // q: entries left
	}{
		{name: "nobody queued nor marked: nothing published (waitmark.go)", want: 1, pubs: map[string][]string{}},
		{name: "head listening on its own channel: there and on any, not on the channel", queue: []queued{{a, true}, {b, true}}, own: true,
			want: 1, pubs: map[string][]string{tOwn: {named(a)}, tAny: {named(a)}}, remain: 2},
		{name: "head's Manager not listening: on the channel, naming it", queue: []queued{{a, true}, {b, true}},
			want: 1, pubs: map[string][]string{tChan: {named(a)}}, remain: 2},
		{name: "head of an older client (no tag): on the channel, naming it", queue: []queued{{"oldid", true}, {a, true}}, own: true,
			want: 1, pubs: map[string][]string{tChan: {named("oldid")}}, remain: 2},
		{name: "dead head dropped: the next one named", queue: []queued{{"dead." + tTag, false}, {a, true}}, own: true,
			want: 1, pubs: map[string][]string{tOwn: {named(a)}, tAny: {named(a)}}, remain: 1},
		{name: "only dead waiters: dropped, the key to everyone", queue: []queued{{a, false}, {b, false}}, own: true,
			want: 1, pubs: map[string][]string{tChan: {tKey}}},
		{name: "queue key not given (force-expire by token): the key, to everyone", queue: []queued{{a, true}}, own: true,
			keys: []string{tKey}, want: 1, pubs: map[string][]string{tChan: {tKey}}, remain: 1},
		{name: "someone else's key: kept, nothing published", queue: []queued{{a, true}}, own: true, lock: "other",
			want: -1, pubs: map[string][]string{}, remain: 1},
		{name: "no channel (clean-up of a failed round): nothing published", queue: []queued{{a, true}}, own: true, ch: "-",
			want: 1, pubs: map[string][]string{}, remain: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fillQueue(t, cl, tt.queue...)
			lock, keys, ch := tt.lock, tt.keys, tt.ch
			if lock == "" {
				lock = "ours"
			}
			if keys == nil {
				keys = []string{tKey, tQueue}
			}
			switch ch {
			case "":
				ch = tChan
			case "-":
				ch = ""
			}
			require.NoError(t, cl.Set(ctx, tKey, lock, time.Minute).Err())
			var r int64
			pubs := published(t, cl, tt.own, func() {
				var err error
				r, err = releaseScript.Run(ctx, cl, keys, "ours", ch).Int64()
				require.NoError(t, err)
			})
			assert.Equal(t, tt.want, r)
			assert.Equal(t, tt.pubs, pubs)
			q, err := cl.ZRangeArgs(ctx, zrange0(tQueue)).Result()
			require.NoError(t, err)
			assert.Len(t, q, tt.remain)
		})
	}
}

func TestFairLeaveScriptWakesTheNextHead(t *testing.T) {
	ctx := context.Background()
	c, _ := testCluster(t, 1)
	cl := c.Servers[0].Client()
	a, b, d := "a."+tTag, "b."+tTag, "d."+tTag
	tests := []struct {
		name  string
		queue []queued
		held  bool
		who   string
		pubs  map[string][]string
		left  []string
	}{
		{"the head leaves a free lock: the next one is woken", []queued{{a, true}, {b, true}}, false, a,
			map[string][]string{tOwn: {tKey + "\nnext " + b}, tAny: {tKey + "\nnext " + b}}, []string{"q:" + b}},
		{"the head leaves a held lock: its release will wake", []queued{{a, true}, {b, true}}, true, a,
			map[string][]string{}, []string{"q:" + b}},
		{"a waiter behind the head leaves: nothing changes for the head", []queued{{a, true}, {b, true}}, false, b,
			map[string][]string{}, []string{"q:" + a}},
		{"behind dead waiters only, it was the head", []queued{{d, false}, {a, true}, {b, true}}, false, a,
			map[string][]string{tOwn: {tKey + "\nnext " + b}, tAny: {tKey + "\nnext " + b}}, []string{"q:" + b}},
		{"the last waiter leaves: nobody to wake", []queued{{a, true}}, false, a, map[string][]string{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fillQueue(t, cl, tt.queue...)
			require.NoError(t, cl.Del(ctx, tKey).Err())
			if tt.held {
				require.NoError(t, cl.Set(ctx, tKey, "x", time.Minute).Err())
			}
			pubs := published(t, cl, true, func() {
				n, err := goRedisScript(fairLeaveScript).Run(ctx, cl, []string{tKey, tQueue}, tt.who, tChan).Int64()
				require.NoError(t, err)
				assert.EqualValues(t, 2, n, "its two entries removed")
			})
			assert.Equal(t, tt.pubs, pubs)
			q, err := cl.ZRangeArgs(ctx, zrange0(tQueue)).Result()
			require.NoError(t, err)
			assert.Equal(t, tt.left, nilIfEmpty(q))
		})
	}
}

func TestFairUnwindScriptWakesTheHeadNotItself(t *testing.T) {
	ctx := context.Background()
	c, _ := testCluster(t, 1)
	cl := c.Servers[0].Client()
	a, b := "a."+tTag, "b."+tTag
	tests := []struct {
		name  string
		queue []queued // before the unwind; the unwinder is b, score 50 or 500
		score string
		lock  string
		want  int64
		pubs  map[string][]string
	}{
		{"behind the head: the head is woken", []queued{{a, true}}, "500", "v", 1,
			map[string][]string{tOwn: {tKey + "\nnext " + a}, tAny: {tKey + "\nnext " + a}}},
		{"the head itself: nobody is woken (no loop)", []queued{{a, true}}, "50", "v", 1, map[string][]string{}},
		{"nothing of ours to undo: nothing published", []queued{{a, true}}, "500", "", 0, map[string][]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fillQueue(t, cl, tt.queue...)
			require.NoError(t, cl.Del(ctx, tKey).Err())
			if tt.lock != "" {
				require.NoError(t, cl.Set(ctx, tKey, tt.lock, time.Minute).Err())
			}
			pubs := published(t, cl, true, func() {
				r, err := goRedisScript(fairUnwindScript).Run(ctx, cl, []string{tKey, tQueue}, "v", b, tt.score, 60000, tChan).Int64()
				require.NoError(t, err)
				assert.Equal(t, tt.want, r)
			})
			assert.Equal(t, tt.pubs, pubs)
		})
	}
}
