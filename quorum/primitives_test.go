package quorum

import (
	"context"
	"testing"
	"time"

	"github.com/redlock/redlock/internal/keyspace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSemaphoreGivesAtMostNPermits(t *testing.T) {
	_, m := testCluster(t, 3)
	ctx := context.Background()
	sem, err := m.Semaphore("sem", 3)
	require.NoError(t, err)
	var held []*Permit
	for i := range 3 {
		p, err := sem.TryAcquire(ctx, time.Second)
		require.NoError(t, err, "permit %d", i)
		assert.Equal(t, i, p.Slot())
		assert.Equal(t, "lock:sem:permit:"+string(rune('0'+i)), p.Key())
		held = append(held, p)
	}
	_, err = sem.TryAcquire(ctx, time.Second)
	require.ErrorIs(t, err, ErrNotAcquired)
	require.ErrorIs(t, err, ErrHeld)
	require.NoError(t, held[1].Release(ctx))
	p, err := sem.TryAcquire(ctx, time.Second)
	require.NoError(t, err)
	assert.Equal(t, 1, p.Slot())
	require.NoError(t, p.Extend(ctx, 2*time.Second))
	v, err := parseValue(p.Token())
	require.NoError(t, err)
	assert.Equal(t, "sem", v.Owner.Kind)
	assert.Equal(t, 3, v.Owner.Count)
}

func TestSemaphoreRefusesBadInput(t *testing.T) {
	_, m := testCluster(t, 3)
	for _, n := range []int{0, -1, MaxPermits + 1} {
		_, err := m.Semaphore("sem", n)
		require.ErrorIs(t, err, ErrInvalidArgument, "%d permits", n)
	}
	_, err := m.Semaphore("sem:permit:1", 2)
	require.ErrorIs(t, err, ErrInvalidName)
}

func TestSemaphoreWaiterIsWokenByARelease(t *testing.T) {
	_, m := testCluster(t, 3, WithRetry(100, time.Second, 0))
	ctx := context.Background()
	sem, err := m.Semaphore("sem", 1)
	require.NoError(t, err)
	a, err := sem.TryAcquire(ctx, 5*time.Second)
	require.NoError(t, err)
	go func() {
		time.Sleep(100 * time.Millisecond)
		_ = a.Release(ctx)
	}()
	t0 := time.Now()
	_, err = sem.TryAcquire(ctx, time.Second)
	require.Error(t, err)
	b, err := sem.Acquire(ctx, time.Second)
	require.NoError(t, err)
	assert.Less(t, time.Since(t0), 900*time.Millisecond, "woken by the release, not the 1s retry delay")
	_ = b.Release(ctx)
}

func TestMultiNameAllOrNone(t *testing.T) {
	c, m := testCluster(t, 3)
	ctx := context.Background()
	ab, err := m.tryMulti(ctx, []string{"b", "a"}, time.Second)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, namesOf(ab))
	assert.Len(t, keysOn(t, c, "lock:a"), 3)
	assert.Equal(t, keysOn(t, c, "lock:a"), keysOn(t, c, "lock:b"))
	_, err = m.tryMulti(ctx, []string{"c", "b"}, time.Second)
	require.ErrorIs(t, err, ErrHeld)
	assert.Empty(t, keysOn(t, c, "lock:c"), "a failed round leaves nothing behind")
	_, err = m.TryAcquire(ctx, "a", time.Second)
	require.ErrorIs(t, err, ErrHeld, "a plain lock of one of the names is excluded")
	require.NoError(t, ab.Extend(ctx, 2*time.Second))
	require.NoError(t, ab.Release(ctx))
	assert.Empty(t, keysOn(t, c, "lock:a"))
	assert.Empty(t, keysOn(t, c, "lock:b"))
	bc, err := m.tryMulti(ctx, []string{"c", "b"}, time.Second)
	require.NoError(t, err)
	_ = bc.Release(ctx)
}

func TestMultiNameRefusesBadInput(t *testing.T) {
	_, m := testCluster(t, 3)
	ctx := context.Background()
	_, err := m.tryMulti(ctx, []string{"a", "a"}, time.Second)
	require.ErrorIs(t, err, ErrInvalidName)
	_, err = m.tryMulti(ctx, nil, time.Second)
	require.ErrorIs(t, err, ErrInvalidName)
	_, err = m.tryMulti(ctx, []string{"a", "b"}, time.Second, WithFencing())
	require.ErrorIs(t, err, ErrInvalidArgument)
	_, err = m.TryAcquire(ctx, "a", time.Second, withShared(), withPermits(2))
	require.ErrorIs(t, err, ErrInvalidArgument)
}

func TestSharedHoldsExcludeExclusive(t *testing.T) {
	c, m := testCluster(t, 3)
	ctx := context.Background()
	sh, err := m.Shared("rw")
	require.NoError(t, err)
	s1, err := sh.TryAcquire(ctx, time.Second)
	require.NoError(t, err)
	s2, err := sh.TryAcquire(ctx, time.Second)
	require.NoError(t, err)
	assert.Equal(t, "zset", c.Servers[0].Client().Type(ctx, "lock:rw").Val(), "shared holders sit at the key")
	_, err = m.TryAcquire(ctx, "rw", time.Second)
	require.ErrorIs(t, err, ErrHeld, "the exclusive holder is kept out")
	// A peer's SET NX on the key fails too.
	for _, s := range c.Servers {
		ok, err := s.Client().SetNX(ctx, "lock:rw", "peer", time.Second).Result()
		require.NoError(t, err)
		assert.False(t, ok)
	}
	require.NoError(t, s1.Extend(ctx, 2*time.Second))
	require.NoError(t, s1.Release(ctx))
	_, err = m.TryAcquire(ctx, "rw", time.Second)
	require.ErrorIs(t, err, ErrHeld)
	require.NoError(t, s2.Release(ctx))
	x, err := m.TryAcquire(ctx, "rw", time.Second)
	require.NoError(t, err)
	_, err = sh.TryAcquire(ctx, time.Second)
	require.ErrorIs(t, err, ErrHeld, "shared holders are kept out by the exclusive one")
	require.NoError(t, x.Release(ctx))
}

func TestSharedRefusesBadInput(t *testing.T) {
	_, m := testCluster(t, 3)
	_, err := m.Shared("rw:xwait")
	require.ErrorIs(t, err, ErrInvalidName)
	sh, err := m.Shared("rw")
	require.NoError(t, err)
	for _, opt := range []LockOption{WithFair(), WithFencing()} {
		_, err = sh.TryAcquire(context.Background(), time.Second, opt)
		require.ErrorIs(t, err, ErrInvalidArgument)
	}
}

func TestExclusiveWaiterIsNotStarvedBySharedHolders(t *testing.T) {
	tests := []struct {
		name string
		opts []LockOption
	}{
		{"plain", nil},
		// Regression: a fair exclusive waiter did not mark itself and was starved.
		{"fair", []LockOption{WithFair()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, m := testCluster(t, 3, WithRetry(1000, 20*time.Millisecond, 10*time.Millisecond))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// A stream of overlapping shared holders: there is always one.
			readers := make(chan struct{})
			go func() {
				defer close(readers)
				for ctx.Err() == nil {
					l, err := m.Acquire(ctx, "rw", 300*time.Millisecond, withShared())
					if err != nil {
						continue
					}
					go func() {
						time.Sleep(100 * time.Millisecond)
						_ = l.Release(context.Background())
					}()
					time.Sleep(30 * time.Millisecond)
				}
			}()
			time.Sleep(100 * time.Millisecond)
			wctx, wcancel := context.WithTimeout(ctx, 3*time.Second)
			defer wcancel()
			x, err := m.Acquire(wctx, "rw", time.Second, tt.opts...)
			require.NoError(t, err, "the exclusive waiter gets in")
			cancel()
			<-readers
			_ = x.Release(context.Background())
		})
	}
}

func TestClassifyKey(t *testing.T) {
	kc := func(k keyspace.KeyKind, name string, permit int) keyspace.KeyClass {
		return keyspace.KeyClass{Kind: k, Name: name, Permit: permit}
	}
	tests := []struct {
		name, typ string
		want      keyspace.KeyClass
	}{
		{"a", "string", kc(keyspace.KeyLock, "a", -1)},
		{"a", "zset", kc(keyspace.KeyShared, "a", -1)},
		{"a", "hash", kc(keyspace.KeyOther, "a", -1)},
		{"a:xwait", "string", kc(keyspace.KeyWriterWaiting, "a", -1)},
		{"a:permit:3", "string", kc(keyspace.KeyPermit, "a", 3)},
		{"a:permit:3:fence", "string", kc(keyspace.KeyFence, "a", 3)},
		{"a:permit:queue", "zset", kc(keyspace.KeyQueue, "a", -1)},
		{"a:leader", "string", kc(keyspace.KeyLeader, "a", -1)},
		{"a:leader:fence", "string", kc(keyspace.KeyFence, "a", -1)},
		{"a:leader:term", "hash", kc(keyspace.KeyTerm, "a", -1)},
		{"a:fence", "string", kc(keyspace.KeyFence, "a", -1)},
		{"a:queue", "zset", kc(keyspace.KeyQueue, "a", -1)},
		{"a:permit:x", "string", kc(keyspace.KeyLock, "a:permit:x", -1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, keyspace.ClassifyKey(tt.name, tt.typ))
			if tt.want.Kind != keyspace.KeyLock && tt.want.Kind != keyspace.KeyShared && tt.want.Kind != keyspace.KeyOther {
				assert.ErrorIs(t, ValidateName(tt.name), ErrInvalidName, "a user cannot name a lock like a primitive's key")
			}
		})
	}
}

func TestFairSemaphoreServesWaitersInOrder(t *testing.T) {
	_, m := testCluster(t, 3, WithRetry(1000, 30*time.Millisecond, 10*time.Millisecond))
	ctx := context.Background()
	opts := []LockOption{withPermits(2), WithFair()}
	p1, err := m.TryAcquire(ctx, "fsem", 5*time.Second, opts...)
	require.NoError(t, err)
	p2, err := m.TryAcquire(ctx, "fsem", 5*time.Second, opts...)
	require.NoError(t, err)
	got := make(chan string, 2)
	wait := func(who string) {
		l, err := m.Acquire(ctx, "fsem", 5*time.Second, opts...)
		if assert.NoError(t, err) {
			got <- who
			<-time.After(time.Second)
			_ = l.Release(ctx)
		}
	}
	go wait("first")
	time.Sleep(100 * time.Millisecond)
	go wait("second")
	time.Sleep(100 * time.Millisecond)
	_, err = m.TryAcquire(ctx, "fsem", time.Second, opts...)
	require.ErrorIs(t, err, ErrHeld, "a try does not jump the queue")
	require.NoError(t, p1.Release(ctx))
	assert.Equal(t, "first", <-got)
	select {
	case w := <-got:
		t.Fatalf("%s got a permit while both were held", w)
	case <-time.After(200 * time.Millisecond):
	}
	require.NoError(t, p2.Release(ctx))
	assert.Equal(t, "second", <-got)
}

func TestPermitFencingIsPerSlot(t *testing.T) {
	_, m := testCluster(t, 3)
	ctx := context.Background()
	opts := []LockOption{withPermits(2), WithFencing()}
	a, err := m.TryAcquire(ctx, "fenced", time.Second, opts...)
	require.NoError(t, err)
	b, err := m.TryAcquire(ctx, "fenced", time.Second, opts...)
	require.NoError(t, err)
	assert.Equal(t, int64(1), a.Fence())
	assert.Equal(t, int64(1), b.Fence(), "another slot, another counter")
	require.NoError(t, a.Release(ctx))
	c, err := m.TryAcquire(ctx, "fenced", time.Second, opts...)
	require.NoError(t, err)
	assert.Equal(t, slotOf(a), slotOf(c))
	assert.Equal(t, int64(2), c.Fence())
}

func TestPrimitivesSurviveScriptFlush(t *testing.T) {
	c, m := testCluster(t, 3)
	ctx := context.Background()
	flush := func() {
		for _, s := range c.Servers {
			require.NoError(t, s.Client().ScriptFlush(ctx).Err())
		}
	}
	flush()
	p, err := m.TryAcquire(ctx, "s", time.Second, withPermits(2))
	require.NoError(t, err)
	flush()
	require.NoError(t, p.Extend(ctx, time.Second))
	flush()
	require.NoError(t, p.Release(ctx))
	flush()
	ml, err := m.tryMulti(ctx, []string{"x", "y"}, time.Second)
	require.NoError(t, err)
	flush()
	require.NoError(t, ml.Extend(ctx, time.Second))
	flush()
	require.NoError(t, ml.Release(ctx))
	flush()
	sh, err := m.TryAcquire(ctx, "r", time.Second, withShared())
	require.NoError(t, err)
	flush()
	require.NoError(t, sh.Extend(ctx, time.Second))
	flush()
	require.NoError(t, sh.Release(ctx))
	flush()
	e, _ := m.Election("e")
	ld, err := e.Campaign(ctx, "v", time.Second)
	require.NoError(t, err)
	flush()
	_, err = e.Leader(ctx)
	require.NoError(t, err)
	flush()
	require.NoError(t, ld.Proclaim(ctx, "w"))
	require.NoError(t, ld.Release(ctx))
	for _, s := range c.Servers {
		keys, _ := s.Client().Keys(ctx, "lock:*").Result()
		for _, k := range keys {
			assert.Contains(t, []string{"lock:s:permit:0:fence", "lock:e:leader:fence", "lock:e:leader:term"}, k, "left behind on %s", s.Name)
		}
	}
}

func TestVerifyReadsEachPrimitive(t *testing.T) {
	c, m := testCluster(t, 3)
	ctx := context.Background()
	ml, err := m.tryMulti(ctx, []string{"v1", "v2"}, 5*time.Second)
	require.NoError(t, err)
	sh, err := m.TryAcquire(ctx, "v3", 5*time.Second, withShared())
	require.NoError(t, err)
	require.NoError(t, ml.Verify(ctx))
	require.NoError(t, sh.Verify(ctx))
	for _, s := range c.Servers[:2] {
		require.NoError(t, s.Client().Del(ctx, "lock:v2").Err())
		require.NoError(t, s.Client().ZRem(ctx, "lock:v3", sh.Token()).Err())
	}
	require.ErrorIs(t, ml.Verify(ctx), ErrLost, "one name gone from a majority")
	require.ErrorIs(t, sh.Verify(ctx), ErrLost)
	<-ml.Done()
	<-sh.Done()
}
