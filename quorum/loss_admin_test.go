package quorum

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redlock/redlock/internal/keyspace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBugLossWatchHearsAdminOfPermitAndShare: the holder of a semaphore permit,
// and a shared holder removed by token while another holder remains, hear an
// administrator's force-expire or release by token at once (WithLossWatch), as a
// plain lock's holder does: Done fires long before the TTL or an extension. The
// loss watch listens on the hold's own key's channel; the administrative paths
// published only on the semaphore's channel, or nowhere while shares remained.
func TestBugLossWatchHearsAdminOfPermitAndShare(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3)
	const ttl = 30 * time.Second // far beyond the bound below: only the watch can fire Done
	seenOf := func(key string) map[string]keyspace.Seen {
		out := map[string]keyspace.Seen{}
		for name, v := range keysOn(t, c, key) {
			out[name] = keyspace.Seen{Type: "string", Value: v}
		}
		return out
	}
	tests := []struct {
		name   string
		opts   []LockOption
		remove func(t *testing.T, name string, l *Lock)
	}{
		{"permit force-expired as listed", []LockOption{withPermits(2)}, func(t *testing.T, name string, l *Lock) {
			_, err := m.forceExpireListed(ctx, name+":permit:"+strconv.Itoa(slotOf(l)), seenOf(l.Key()))
			require.NoError(t, err)
		}},
		{"permit released by token", []LockOption{withPermits(2)}, func(t *testing.T, name string, l *Lock) {
			_, err := m.releaseHeld(ctx, []string{name}, l.Token())
			require.NoError(t, err)
		}},
		{"share released by token, another share left", []LockOption{withShared()}, func(t *testing.T, name string, l *Lock) {
			_, err := m.releaseHeld(ctx, []string{name}, l.Token())
			require.NoError(t, err)
		}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := "lw-admin-" + strconv.Itoa(i)
			other, err := m.TryAcquire(ctx, name, ttl, append(tt.opts, WithLossWatch())...)
			require.NoError(t, err)
			l, err := m.TryAcquire(ctx, name, ttl, append(tt.opts, WithLossWatch())...)
			require.NoError(t, err)
			// Let the watch's subscription be confirmed: a message before it
			// is a hint lost by design.
			require.Eventually(t, func() bool {
				h := m.runningHub()
				if h == nil {
					return true // the watch does not listen through the wake-up hub
				}
				h.mu.Lock()
				defer h.mu.Unlock()
				return len(h.confirmed[wakeChannel(l.Key())]) == 3
			}, 5*time.Second, 5*time.Millisecond)
			tt.remove(t, name, l)
			select {
			case <-l.Done():
				assert.ErrorIs(t, l.Err(), ErrLost)
			case <-time.After(5 * time.Second):
				t.Fatalf("the holder did not hear that its hold was removed (%s)", l.Key())
			}
			select {
			case <-other.Done():
				t.Fatal("the other holder was told it lost")
			case <-time.After(200 * time.Millisecond):
			}
			require.NoError(t, other.Verify(ctx), "the other holder still holds")
			require.NoError(t, other.Release(ctx))
		})
	}
}
