package quorum

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// TestBugLossWatchHearsAKeyReplacedByAnotherType: a lock's key replaced on a
// quorum by a value of another type (a shared holders' set: shared holders
// took the name once a FLUSHALL had taken the exclusive holder's key away, or
// another client's hash) was no loss to Lock.Verify, which read the WRONGTYPE
// reply as a master that did not answer: the verification was inconclusive,
// made again every second with the same result, and the holder went on until
// its release or Until while the shared holders held the name (found by
// TestAttackOutsideRemovalsOverlapOnlyWithinTheLossBound: an overlap of 560ms).
// As for an extension, such a key is another holder's: Verify says ErrLost and
// the watched holder's Done fires within a few round trips.
func TestBugLossWatchHearsAKeyReplacedByAnotherType(t *testing.T) {
	for _, k := range []struct {
		name string
		opts []LockOption
	}{{"mutex", nil}, {"permit", []LockOption{withPermits(2)}}} {
		t.Run(k.name, func(t *testing.T) {
			c, m := testCluster(t, 5)
			ctx := context.Background()
			l, err := m.Acquire(ctx, "wt", 30*time.Second, append(k.opts, WithLossWatch())...)
			require.NoError(t, err)
			armed(t, m, l)
			for _, s := range c.Servers[:3] {
				_, err := s.Client().TxPipelined(ctx, func(p redis.Pipeliner) error {
					p.Del(ctx, l.Key())
					p.ZAdd(ctx, l.Key(), redis.Z{Score: 1, Member: "rl1.shared.holder"})
					return nil
				})
				require.NoError(t, err)
			}
			select {
			case <-l.Done():
				require.ErrorIs(t, l.Err(), ErrLost)
			case <-time.After(3 * time.Second):
				t.Fatal("the holder did not hear that its key holds another type on 3 of 5 masters")
			}
			err = l.Verify(ctx)
			require.ErrorIs(t, err, ErrLost)
			require.NotErrorIs(t, err, ErrUnavailable)
		})
	}
}
