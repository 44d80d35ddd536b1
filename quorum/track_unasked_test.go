package quorum

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestBugLossWatchRepliesNeverAskedForHideALoss: a tracking connection that
// delivered replies to commands the watch never sent (a proxy's, a master out
// of step) queued them as answers: the watch read every later reply as the
// answer to the command before, and once a batch's worth of them (1,024) had
// queued up, its reader stopped reading, invalidation pushes included. A lock
// deleted from every master afterwards went unheard (Done silent after 5 s;
// its TTL is a minute). A reply nothing asked for must drop the connection,
// which is dialled again and every key read: no false loss, the real one heard.
func TestBugLossWatchRepliesNeverAskedForHideALoss(t *testing.T) {
	for _, tc := range []struct {
		name    string
		replies int
	}{{"one", 1}, {"a batch and more", 2 * trackBatch}} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := testCluster(t, 3)
			proxies := make([]*trackProxy, len(c.Servers))
			for i, s := range c.Servers {
				proxies[i] = newTrackProxy(t, s.Addr())
			}
			m := managerVia(t, c, func(i int, n *Node) { n.Dialer = proxies[i].dial })
			ctx := context.Background()
			l, err := m.Acquire(ctx, "unasked", time.Minute, WithLossWatch())
			require.NoError(t, err)
			armed(t, m, l)

			unasked := bytes.Repeat([]byte("+OK\r\n"), tc.replies)
			for _, p := range proxies {
				require.Equal(t, 1, p.inject(unasked), "one tracking connection per master")
			}
			// Past a tick of the watch: replies nobody asked for are no loss.
			time.Sleep(trackPoll + 200*time.Millisecond)
			select {
			case <-l.Done():
				t.Fatalf("Done fired with the lock held on every master: %v", l.Err())
			default:
			}
			require.NoError(t, l.Verify(ctx))

			for _, s := range c.Servers {
				require.NoError(t, s.Client().Del(ctx, l.watchKeys()[0]).Err())
			}
			select {
			case <-l.Done():
				require.True(t, errors.Is(l.Err(), ErrLost), "Err %v", l.Err())
			case <-time.After(5 * time.Second):
				t.Fatalf("the lock deleted from every master: Done silent 5 s later")
			}
		})
	}
}
