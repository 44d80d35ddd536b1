package quorum

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRefusedAcquisitionBesideAStoppedMaster: a lock held on four running masters
// of five, the fifth stopped, a node timeout of 1 s. An acquisition that the four
// refuse fails in a fraction of the node timeout (its round once waited the whole
// timeout for the stopped master, and its clean-up waited again: two seconds),
// with the lock's holder named as before; its clean-up of the stopped master runs
// in the background, so that once the master resumes nothing of the failed
// acquisition is left there, whichever of the two SETs it ran first; and Close
// returns promptly. Table: the
// stopped master held the lock before it stopped, or never did.
func TestRefusedAcquisitionBesideAStoppedMaster(t *testing.T) {
	const timeout = time.Second
	tests := []struct {
		name       string
		heldBefore bool // the holder took the lock before the master stopped
	}{
		{"the stopped master holds it too", true},
		{"the stopped master never got it", false},
	}
	kinds := []struct {
		name string
		take func(ctx context.Context, m *Manager) (*Lock, error)
	}{
		{"TryAcquire", func(ctx context.Context, m *Manager) (*Lock, error) {
			return m.TryAcquire(ctx, "refused", 10*time.Second)
		}},
		{"fair TryAcquire", func(ctx context.Context, m *Manager) (*Lock, error) {
			return m.TryAcquire(ctx, "refused", 10*time.Second, WithFair())
		}},
		{"Acquire with 2 attempts", func(ctx context.Context, m *Manager) (*Lock, error) {
			return m.Acquire(ctx, "refused", 10*time.Second)
		}},
	}
	for _, tt := range tests {
		for _, k := range kinds {
			t.Run(tt.name+"/"+k.name, func(t *testing.T) {
				c, a := testCluster(t, 5, WithNodeTimeout(timeout))
				b := managerFor(t, c, WithNodeTimeout(timeout), WithRetry(2, 20*time.Millisecond, 0))
				ctx := context.Background()
				warm, err := k.take(ctx, b) // b's connections up before the master stops
				require.NoError(t, err)
				require.NoError(t, warm.Release(ctx))
				var held *Lock
				if tt.heldBefore {
					held, err = a.TryAcquire(ctx, "refused", time.Minute)
					require.NoError(t, err)
				}
				c.Servers[4].Stop()
				defer c.Servers[4].Cont()
				if !tt.heldBefore {
					held, err = a.TryAcquire(ctx, "refused", time.Minute)
					require.NoError(t, err)
				}
				t0 := time.Now()
				l, err := k.take(ctx, b)
				took := time.Since(t0)
				require.Nil(t, l)
				require.ErrorIs(t, err, ErrHeld)
				t.Logf("refused in %v", took)
				assert.Less(t, took, timeout/2, "refused by four masters, the fifth stopped")
				c.Servers[4].Cont()
				t1 := time.Now()
				require.NoError(t, b.Close())
				assert.Less(t, time.Since(t1), timeout/2, "Close, the clean-up done or ended")
				vals := nonEmpty(keysOn(t, c, held.key))
				for master, v := range vals {
					assert.Equal(t, held.Token(), v, "master %s: only the holder's value", master)
				}
				if tt.heldBefore {
					assert.Len(t, vals, 5)
				}
				assert.False(t, errors.Is(held.Err(), ErrLost))
				require.NoError(t, held.Release(ctx))
			})
		}
	}
}
