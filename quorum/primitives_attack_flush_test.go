package quorum

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// TestAttackFlushallAroundExpiry: each primitive is held on all five masters;
// just before its validity ends one master is FLUSHALLed (its keys, counters and
// records gone), and a rival polls through the moment of expiry. The rival never
// gets in before the holder's Done; once it does, a new leader's term is still
// greater (four masters kept the counter).
func TestAttackFlushallAroundExpiry(t *testing.T) {
	a := newAtk(t, 5, redistest.Options{})
	ctx := context.Background()
	const ttl = 400 * time.Millisecond
	a.rec.Limit("fl/sem", 2)
	type prim struct {
		name, kind string
		take       func(m *Manager) (*Lock, int64)
		holders    int // how many the first client takes
	}
	rivalM := a.client("rival")
	prims := []prim{
		{"fl/sem", "", func(m *Manager) (*Lock, int64) {
			l, err := m.TryAcquire(ctx, "fl/sem", ttl, withPermits(2))
			if err != nil {
				return nil, 0
			}
			return l, 0
		}, 2},
		{"fl/rw", "", func(m *Manager) (*Lock, int64) {
			l, err := m.TryAcquire(ctx, "fl/rw", ttl)
			if err != nil {
				return nil, 0
			}
			return l, 0
		}, 0},
		{"fl/rw2", "shared", func(m *Manager) (*Lock, int64) {
			l, err := m.TryAcquire(ctx, "fl/rw2", ttl, withShared())
			if err != nil {
				return nil, 0
			}
			return l, 0
		}, 0},
		{"fl/a fl/b", "multi", func(m *Manager) (*Lock, int64) {
			l, err := m.tryMulti(ctx, []string{"fl/a", "fl/b"}, ttl)
			if err != nil {
				return nil, 0
			}
			return l, 0
		}, 0},
		{"fl/job", "", func(m *Manager) (*Lock, int64) {
			e, _ := m.Election("fl/job")
			wait := 2 * time.Second // the holder campaigns; the rival polls
			if m == rivalM {
				wait = 5 * time.Millisecond
			}
			cctx, cancel := context.WithTimeout(ctx, wait)
			defer cancel()
			ld, err := e.Campaign(cctx, "x", ttl, WithKeepAlive(KeepAlive{MaxExtensions: 1}))
			if err != nil {
				return nil, 0
			}
			return ld.Lock, ld.Term()
		}, 0},
	}
	holder := a.client("holder")
	var lastTerm int64
	for _, p := range prims {
		n := max(p.holders, 1)
		var ls []*Lock
		for range n {
			l, term := p.take(holder)
			require.NotNil(t, l, p.name)
			h := a.hold("holder", l, time.Now(), p.kind)
			if term > 0 {
				h.SetTerm(term)
				lastTerm = term
			}
			ls = append(ls, l)
		}
		// The leadership is extended once: flush near its second deadline.
		// On a busy machine that extension may fail and the leadership end first:
		// the flush then comes after its end, which the checker also accepts.
		if p.name == "fl/job" {
			select {
			case <-ls[0].UntilChanged():
			case <-ls[0].Done():
			case <-time.After(10 * time.Second):
				t.Fatal("the leadership was neither extended nor ended in 10s")
			}
		}
		time.Sleep(time.Until(ls[0].Until().Add(-10 * time.Millisecond)))
		require.NoError(t, a.c.Servers[0].Client().FlushAll(ctx).Err())
		a.fault("FLUSHALL a, 10ms before %s expires", p.name)
		deadline := time.Now().Add(ttl)
		for time.Now().Before(deadline) {
			if l, term := p.take(rivalM); l != nil {
				h := a.hold("rival", l, time.Now(), p.kind)
				if term > 0 {
					h.SetTerm(term)
					require.Greater(t, term, lastTerm)
				}
				h.Released(time.Now())
				_ = l.Release(ctx)
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		for _, l := range ls {
			<-l.Done()
			_ = l.Release(ctx)
		}
	}
	a.check()
}
