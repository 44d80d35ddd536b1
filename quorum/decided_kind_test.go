package quorum

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBugRefusedRoundBesideLatencySpikesSaysUnavailable: a lock held on the five
// masters; one of them then answers SET with an error (OOM), two others stall 100 ms
// (a latency spike, well within the node timeout of 1 s) while another Manager's
// TryAcquire runs. The two running masters refuse at once, with the error reply a
// refusal that decides the round: the stalled two are not awaited. They answered
// (held) within 100 ms, so the acquisition is refused because the lock is held
// (ErrHeld), as before the round ended early; it said "quorum of masters
// unavailable" (ErrUnavailable), on which `acquire --wait` gives up rather than
// wait. Masters that really failed still make it ErrUnavailable (the control row).
func TestBugRefusedRoundBesideLatencySpikesSaysUnavailable(t *testing.T) {
	const timeout = time.Second
	tests := []struct {
		name string
		want error
		not  error
	}{
		{"two masters in a 100 ms latency spike", ErrHeld, ErrUnavailable},
		{"two masters killed", ErrUnavailable, ErrHeld},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, a := testCluster(t, 5, WithNodeTimeout(timeout))
			b := managerFor(t, c, WithNodeTimeout(timeout))
			ctx := context.Background()
			warm, err := b.TryAcquire(ctx, "spike", time.Second)
			require.NoError(t, err)
			require.NoError(t, warm.Release(ctx))
			held, err := a.TryAcquire(ctx, "spike", time.Minute)
			require.NoError(t, err)
			require.NoError(t, c.Servers[0].Client().ConfigSet(ctx, "maxmemory", "1").Err())
			if tt.want == ErrHeld {
				for _, i := range []int{3, 4} {
					go c.Servers[i].Client().Do(ctx, "DEBUG", "SLEEP", "0.1")
				}
				time.Sleep(10 * time.Millisecond) // the sleeps began
			} else {
				c.Servers[3].Kill()
				c.Servers[4].Kill()
			}
			l, err := b.TryAcquire(ctx, "spike", 10*time.Second)
			require.Nil(t, l)
			assert.ErrorIs(t, err, tt.want)
			assert.NotErrorIs(t, err, tt.not)
			require.NoError(t, c.Servers[0].Client().ConfigSet(ctx, "maxmemory", "0").Err())
			if tt.want == ErrHeld {
				require.NoError(t, held.Release(ctx))
				assert.Empty(t, nonEmpty(keysOn(t, c, held.key)), "nothing left once the holder released")
			}
		})
	}
}
