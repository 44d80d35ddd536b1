package quorum

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// TestAttackStaleHolderNeverTouchesTheNextOne: each primitive's holder A has its
// keys deleted behind its back (an administrator), a rival B takes them, and A,
// still inside its validity, extends, verifies, proclaims and releases. A learns
// it lost (ErrLost), and B's keys, values, TTLs and the election's record are
// exactly as they were.
func TestAttackStaleHolderNeverTouchesTheNextOne(t *testing.T) {
	a := newAtk(t, 5, redistest.Options{})
	ma, mb := a.client("A"), a.client("B")
	ctx := context.Background()
	const ttl = 5 * time.Second
	ea, err := ma.Election("st/job")
	require.NoError(t, err)
	eb, err := mb.Election("st/job")
	require.NoError(t, err)
	type prim struct {
		name string
		keys []string
		take func(m *Manager, e *Election) (*Lock, *Leadership)
	}
	prims := []prim{
		{"permit", []string{"lock:st/sem:permit:0"}, func(m *Manager, _ *Election) (*Lock, *Leadership) {
			l, err := m.TryAcquire(ctx, "st/sem", ttl, withPermits(1))
			require.NoError(t, err)
			return l, nil
		}},
		{"shared", []string{"lock:st/rw"}, func(m *Manager, _ *Election) (*Lock, *Leadership) {
			l, err := m.TryAcquire(ctx, "st/rw", ttl, withShared())
			require.NoError(t, err)
			return l, nil
		}},
		{"multi", []string{"lock:st/a", "lock:st/b"}, func(m *Manager, _ *Election) (*Lock, *Leadership) {
			l, err := m.tryMulti(ctx, []string{"st/b", "st/a"}, ttl)
			require.NoError(t, err)
			return l, nil
		}},
		{"leader", []string{"lock:st/job:leader", "lock:st/job:leader:term", "lock:st/job:leader:fence"}, func(_ *Manager, e *Election) (*Lock, *Leadership) {
			ld, err := e.Campaign(ctx, e.m.cfg.owner, ttl)
			require.NoError(t, err)
			return ld.Lock, ld
		}},
	}
	dump := func(keys []string) map[string]string {
		out := map[string]string{}
		for _, s := range a.c.Servers {
			for _, k := range keys {
				v, _ := s.Client().Dump(ctx, k).Result()
				out[s.Name+" "+k] = v
			}
		}
		return out
	}
	pttls := func(keys []string) map[string]time.Duration {
		out := map[string]time.Duration{}
		for _, s := range a.c.Servers {
			for _, k := range keys {
				out[s.Name+" "+k] = s.Client().PTTL(ctx, k).Val()
			}
		}
		return out
	}
	for _, p := range prims {
		la, lda := p.take(ma, ea)
		for _, s := range a.c.Servers {
			require.NoError(t, s.Client().Del(ctx, p.keys[0:1]...).Err())
			if p.name == "multi" {
				require.NoError(t, s.Client().Del(ctx, p.keys[1]).Err())
			}
		}
		a.fault("%s: A's keys deleted", p.name)
		lb, ldb := p.take(mb, eb)
		before, ttls := dump(p.keys), pttls(p.keys)
		require.ErrorIs(t, la.Extend(ctx, ttl), ErrLost, p.name)
		<-la.Done()
		require.ErrorIs(t, la.Verify(ctx), ErrLost, p.name)
		if lda != nil {
			require.Error(t, lda.Proclaim(ctx, "stale"), p.name)
			li, err := eb.Leader(ctx)
			require.NoError(t, err)
			require.Equal(t, ldb.Term(), li.Term)
			require.NotEqual(t, "stale", li.Value)
		}
		_ = la.Release(ctx)
		require.Equal(t, before, dump(p.keys), "%s: the stale holder changed the next one's keys", p.name)
		for k, d := range pttls(p.keys) {
			require.LessOrEqual(t, d, ttls[k], "%s: the stale holder extended %s", p.name, k)
		}
		require.NoError(t, lb.Verify(ctx), p.name)
		require.NoError(t, lb.Release(ctx), p.name)
	}
}

// TestAttackHostileValuesAndLabels: a candidate publishes a value with NUL, CR,
// LF, ESC, invalid UTF-8 and 4000 bytes (the bound is 4096), under an owner label with terminal
// escapes; Leader and Observe return the value byte for byte and the label as
// stored (escaping is the printer's job), and the other primitives take the same
// label.
func TestAttackHostileValuesAndLabels(t *testing.T) {
	a := newAtk(t, 3, redistest.Options{})
	m := a.client("c")
	ctx := context.Background()
	label := "\x1b[2J\x1b]0;pwned\x07\r\nowner\x00"
	value := "\x00\r\n\x1b[31mleader\xff\xfe" + strings.Repeat("v", 4000)
	e, err := m.Election("hv/job")
	require.NoError(t, err)
	ld, err := e.Campaign(ctx, value, 2*time.Second, WithLockOwner(label))
	require.NoError(t, err)
	li, err := e.Leader(ctx)
	require.NoError(t, err)
	require.Equal(t, value, li.Value)
	require.NotNil(t, li.Owner)
	oc, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	o := <-e.Observe(oc)
	require.NotNil(t, o.Leader)
	require.Equal(t, value, o.Leader.Value)
	require.NoError(t, ld.Proclaim(ctx, value+"2"))
	li, err = e.Leader(ctx)
	require.NoError(t, err)
	require.Equal(t, value+"2", li.Value)
	require.NoError(t, ld.Release(ctx))
	for _, opt := range []LockOption{withPermits(3), withShared()} {
		l, err := m.TryAcquire(ctx, "hv/x"+fmt.Sprint(len(label)), time.Second, opt, WithLockOwner(label))
		require.NoError(t, err)
		require.NoError(t, l.Release(ctx))
	}
	l, err := m.tryMulti(ctx, []string{"hv/[a]*?", "hv/\\b"}, time.Second, WithLockOwner(label))
	require.NoError(t, err)
	require.NoError(t, l.Release(ctx))
}
