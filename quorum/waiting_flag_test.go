package quorum

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redlock/redlock/internal/keyspace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The waiting flag ("<lock key> waiting", release.lua): the short release learns
// from its DEL whether anyone waits, so every waiter must keep the flag as long as
// its marker or place, and the release must set it again for the waiters it did
// not wake.

const tFlag = tKey + waitingSuffix

// releaseShort runs release.lua in its short form (key and value only), as
// Lock.Release sends it.
func releaseShort(ctx context.Context, cl *redis.Client, value string) (int64, error) {
	return releaseScript.Run(ctx, cl, []string{tKey}, value).Int64()
}

func TestReleaseShortFormReadsTheWaitingFlag(t *testing.T) {
	ctx := context.Background()
	c, _ := testCluster(t, 1)
	cl := c.Servers[0].Client()
	a, b := "a."+tTag, "b."+tTag
	named := func(id string) string { return tKey + "\nnext " + id }
	tests := []struct {
		name  string
		flag  bool         // the flag is there before the release
		queue []queued     // the fair queue's places (none: no queue key)
		mark  bool         // a plain waiter's marker in the queue key
		other func() error // writes a key of another type at the queue key
		lock  string       // the key's value; default ours
		want  int64        // the script's reply
		pubs  map[string][]string
		kept  bool // the flag is there after the release
	}{
		{name: "nobody waits: one DEL, nothing published", want: 1, pubs: map[string][]string{}},
		{name: "a queue without the flag (a waiter of an older client): not read", queue: []queued{{a, true}},
			want: 1, pubs: map[string][]string{}},
		{name: "the flag without a queue (its waiters won or left): nothing published", flag: true, want: 1,
			pubs: map[string][]string{}},
		{name: "a plain waiter's marker: the key to everyone, the flag kept", flag: true, mark: true, want: 1,
			pubs: map[string][]string{tChan: {tKey}}, kept: true},
		{name: "fair waiters: the head named, the flag kept for the next", flag: true, queue: []queued{{a, true}, {b, true}},
			want: 1, pubs: map[string][]string{tChan: {named(a)}}, kept: true},
		{name: "only dead fair waiters: dropped, the key to everyone, no flag", flag: true, queue: []queued{{a, false}},
			want: 1, pubs: map[string][]string{tChan: {tKey}}},
		{name: "a queue key of another type: the key to everyone, no flag", flag: true,
			other: func() error { return cl.HSet(ctx, tQueue, "h:x", "1").Err() },
			want:  1, pubs: map[string][]string{tChan: {tKey}}},
		{name: "someone else's key: kept, the flag left as it was", flag: true, queue: []queued{{a, true}}, lock: "other",
			want: -1, pubs: map[string][]string{}, kept: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, cl.FlushAll(ctx).Err())
			if tt.queue != nil {
				fillQueue(t, cl, tt.queue...)
			}
			if tt.mark {
				require.NoError(t, cl.ZAdd(ctx, tQueue, zmember(-float64(time.Now().Add(time.Minute).UnixMilli()), "h:plain")).Err())
			}
			if tt.other != nil {
				require.NoError(t, tt.other())
			}
			if cl.Exists(ctx, tQueue).Val() == 1 {
				require.NoError(t, cl.PExpire(ctx, tQueue, 40*time.Second).Err())
			}
			if tt.flag {
				require.NoError(t, cl.Set(ctx, tFlag, "1", 30*time.Second).Err())
			}
			lock := tt.lock
			if lock == "" {
				lock = "ours"
			}
			require.NoError(t, cl.Set(ctx, tKey, lock, time.Minute).Err())
			var r int64
			pubs := published(t, cl, false, func() {
				var err error
				r, err = releaseShort(ctx, cl, "ours")
				require.NoError(t, err)
			})
			assert.Equal(t, tt.want, r)
			assert.Equal(t, tt.pubs, pubs)
			if !tt.kept {
				assert.Zero(t, cl.Exists(ctx, tFlag).Val(), "the flag is gone")
				return
			}
			left := cl.PTTL(ctx, tFlag).Val()
			if tt.want == 1 {
				// Set again for as long as the queue key lives.
				assert.InDelta(t, cl.PTTL(ctx, tQueue).Val().Milliseconds(), left.Milliseconds(), 1000)
			} else {
				assert.InDelta(t, (30 * time.Second).Milliseconds(), left.Milliseconds(), 1000)
			}
		})
	}
}

// Every script that writes a waiter's marker or place keeps the flag alive at
// least as long, never shortens a longer one, and sets it where the queue key is
// of another type (no marker then: the release must still wake everyone).
func TestWaiterScriptsKeepTheWaitingFlag(t *testing.T) {
	ctx := context.Background()
	c, _ := testCluster(t, 1)
	cl := c.Servers[0].Client()
	waitRound := redis.NewScript(waitRoundLua)
	waitMark := redis.NewScript(waitMarkLua)
	const hb = 4000 // a fair waiter's heartbeat TTL, ms: its place lives 2*hb
	tests := []struct {
		name    string
		held    bool         // the lock key is held by someone else
		other   bool         // a hash at the queue key
		longer  bool         // the flag already lives 50 s
		run     func() error // the waiter's script
		flagged bool
		min     time.Duration // the flag's least PTTL after it
	}{
		{name: "wait_round on a held key", held: true, flagged: true, min: 9 * time.Second,
			run: func() error {
				return waitRound.Run(ctx, cl, []string{tKey, tQueue}, "mine", "60000", "w1", "10000").Err()
			}},
		{name: "wait_round on a free key: taken, no marker, no flag",
			run: func() error {
				return waitRound.Run(ctx, cl, []string{tKey, tQueue}, "mine", "60000", "w1", "10000").Err()
			}},
		{name: "wait_round behind a queue key of another type", held: true, other: true, flagged: true, min: 9 * time.Second,
			run: func() error {
				return waitRound.Run(ctx, cl, []string{tKey, tQueue}, "mine", "60000", "w1", "10000").Err()
			}},
		{name: "wait_round never shortens a longer flag", held: true, longer: true, flagged: true, min: 49 * time.Second,
			run: func() error {
				return waitRound.Run(ctx, cl, []string{tKey, tQueue}, "mine", "60000", "w1", "10000").Err()
			}},
		{name: "wait_mark", held: true, flagged: true, min: 9 * time.Second,
			run: func() error { return waitMark.Run(ctx, cl, []string{tKey, tQueue}, "w1", "10000", "60000").Err() }},
		{name: "wait_mark behind a queue key of another type", held: true, other: true, flagged: true, min: 9 * time.Second,
			run: func() error { return waitMark.Run(ctx, cl, []string{tKey, tQueue}, "w1", "10000", "60000").Err() }},
		{name: "fair_acquire waiting", held: true, flagged: true, min: 2*hb*time.Millisecond - time.Second,
			run: func() error {
				return fairAcquireScript.Run(ctx, cl, []string{tKey, tQueue}, "mine", "60000", "w1", "100", "4000", "wait").Err()
			}},
		{name: "fair_acquire waiting on a free key: taken, no place left, no flag",
			run: func() error {
				return fairAcquireScript.Run(ctx, cl, []string{tKey, tQueue}, "mine", "60000", "w1", "100", "4000", "wait").Err()
			}},
		{name: "fair_acquire trying (never queued): no flag", held: true,
			run: func() error {
				return fairAcquireScript.Run(ctx, cl, []string{tKey, tQueue}, "mine", "60000", "w1", "100", "4000", "try").Err()
			}},
		{name: "fair_unwind puts the waiter back", flagged: true, min: 2*hb*time.Millisecond - time.Second,
			run: func() error {
				if err := cl.Set(ctx, tKey, "mine", time.Minute).Err(); err != nil {
					return err
				}
				return goRedisScript(fairUnwindScript).Run(ctx, cl, []string{tKey, tQueue}, "mine", "w1", "100", "4000").Err()
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, cl.FlushAll(ctx).Err())
			if tt.held {
				require.NoError(t, cl.Set(ctx, tKey, "theirs", time.Minute).Err())
			}
			if tt.other {
				require.NoError(t, cl.HSet(ctx, tQueue, "f", "v").Err())
			}
			if tt.longer {
				require.NoError(t, cl.Set(ctx, tFlag, "1", 50*time.Second).Err())
			}
			require.NoError(t, tt.run())
			if !tt.flagged {
				assert.Zero(t, cl.Exists(ctx, tFlag).Val(), "no waiter, no flag")
				return
			}
			left := cl.PTTL(ctx, tFlag).Val()
			assert.GreaterOrEqual(t, left, tt.min)
			if q := cl.PTTL(ctx, tQueue).Val(); !tt.other && !tt.longer {
				assert.GreaterOrEqual(t, left+time.Second, q, "the flag lives as long as the queue key")
			}
		})
	}
}

// A chain of fair waiters behind one holder, each taking the lock once: each
// release is the short form, which deletes the flag, so each waiter's round (the
// head's winning one included) must set it again for the next, or the next one
// sleeps its retry delay (5 s here) instead of being woken.
func TestWaitingFlagSurvivesAFairChain(t *testing.T) {
	ctx := context.Background()
	c, holder := testCluster(t, 3)
	opts := []Option{WithRetry(1000, 5*time.Second, 0), WithNodeTimeout(2 * time.Second)}
	l, err := holder.Acquire(ctx, "chain", time.Minute, WithFair())
	require.NoError(t, err)
	const n = 4
	type got struct {
		at time.Time
		i  int
	}
	gots := make(chan got, n)
	var wg sync.WaitGroup
	defer wg.Wait()
	for i := range n {
		m := managerFor(t, c, opts...)
		wg.Add(1)
		go func() {
			defer wg.Done()
			wl, err := m.Acquire(ctx, "chain", time.Minute, WithFair())
			if !assert.NoError(t, err) {
				gots <- got{i: -1}
				return
			}
			gots <- got{at: time.Now(), i: i}
			time.Sleep(20 * time.Millisecond)
			assert.NoError(t, wl.Release(ctx))
		}()
		time.Sleep(150 * time.Millisecond) // queued in this order
	}
	released := time.Now()
	require.NoError(t, l.Release(ctx))
	for want := range n {
		select {
		case g := <-gots:
			require.Equal(t, want, g.i, "FIFO order")
			assert.Less(t, g.at.Sub(released), 2*time.Second, "waiter %d slept its retry delay: the flag was not set again", g.i)
			released = g.at.Add(20 * time.Millisecond)
		case <-time.After(15 * time.Second):
			t.Fatal("a waiter never got the lock")
		}
	}
}

// The flag is bookkeeping: never a lock in a listing, never a name to create or
// force-expire.
func TestWaitingFlagIsNoLock(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3)
	l, err := m.Acquire(ctx, "listed", time.Minute)
	require.NoError(t, err)
	for _, s := range c.Servers {
		require.NoError(t, s.Client().Set(ctx, m.Key("listed")+waitingSuffix, "1", time.Minute).Err())
		require.NoError(t, s.Client().Set(ctx, m.Key("other")+waitingSuffix, "1", time.Minute).Err())
	}
	lst, err := m.inspect(ctx, "")
	require.NoError(t, err)
	var names []string
	for _, li := range lst.Locks {
		names = append(names, li.Name)
	}
	assert.Equal(t, []string{"listed"}, names)
	assert.Equal(t, keyspace.KeyClass{Kind: keyspace.KeyQueue, Name: "listed", Permit: -1}, keyspace.ClassifyKey("listed"+waitingSuffix, "string"))
	assert.ErrorIs(t, keyspace.ValidateKeyName("listed"+waitingSuffix), ErrInvalidName)
	assert.ErrorIs(t, ValidateName("listed"+waitingSuffix), ErrInvalidName)
	require.NoError(t, l.Release(ctx))
}
