package quorum

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBugWaiterWokenWhenItsHolderExtendedPastTheMarker: a holder keeps its lock
// past its first TTL (a keep-alive, or Extend) and releases it while a waiter
// sleeps its retry delay. The release must wake the waiter at once, as a release
// always did: the waiter's marker must not have expired with the TTL the key had
// when the waiter last looked.
func TestBugWaiterWokenWhenItsHolderExtendedPastTheMarker(t *testing.T) {
	tests := []struct {
		name   string
		shared bool
	}{
		{name: "plain waiter"},
		{name: "shared waiter", shared: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			const ttl = 600 * time.Millisecond
			c, holder := testCluster(t, 3)
			l, err := holder.Acquire(ctx, "ext", ttl, WithKeepAlive(KeepAlive{}))
			require.NoError(t, err)
			m := managerFor(t, c, WithRetry(1000, 6*time.Second, 0), WithNodeTimeout(2*time.Second))
			var opts []LockOption
			if tt.shared {
				opts = append(opts, withShared())
			}
			got := make(chan time.Time, 1)
			go func() {
				wl, err := m.Acquire(ctx, "ext", time.Minute, opts...)
				if !assert.NoError(t, err) {
					return
				}
				got <- time.Now()
				_ = wl.Release(ctx)
			}()
			// The waiter failed, marked, and sleeps its 6s retry delay; the
			// keep-alive extends the holder's key meanwhile, past its first TTL.
			time.Sleep(3 * ttl)
			released := time.Now()
			require.NoError(t, l.Release(ctx))
			select {
			case at := <-got:
				assert.Less(t, at.Sub(released), time.Second, "the waiter slept its retry delay: the release published nothing")
			case <-time.After(15 * time.Second):
				t.Fatal("the waiter never got it")
			}
		})
	}
}
