package quorum

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// sharedMembers reads the members of a shared key on every master, each
// master's clock read in the same call (a pipeline of TIME, ZRANGE and PTTL):
// per master in declared order, each member's time left by that master's clock,
// at most the key's TTL there (nil where the master failed). sent is when the
// read started, which every master's clock reads later. The error is the round's when fewer than a
// quorum answered. admin.Admin.Primitives makes the shared holders of it.
func (m *Manager) sharedMembers(ctx context.Context, key string) (sent time.Time, remaining []map[string]time.Duration, err error) {
	remaining = make([]map[string]time.Duration, len(m.nodes))
	sent = time.Now()
	rep := m.fanout(ctx, "shared-read", key, func(ctx context.Context, n *node) (Outcome, error) {
		var tm *redis.TimeCmd
		var zr *redis.ZSliceCmd
		var pt *redis.DurationCmd
		_, err := n.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			tm = p.Time(ctx)
			zr = p.ZRangeWithScores(ctx, key, 0, -1)
			pt = p.PTTL(ctx, key)
			return nil
		})
		if err != nil && !errors.Is(err, redis.Nil) {
			return OutcomeError, err
		}
		// No member outlives its key: a score (any writer's, of any size) counts
		// up to the key's TTL, in floating point so that none overflows.
		most := noExpiry
		if d := pt.Val(); d > 0 {
			most = d
		}
		now := float64(tm.Val().UnixMilli())
		left := map[string]time.Duration{}
		for _, z := range zr.Val() {
			if ms := z.Score - now; ms > 0 {
				left[z.Member.(string)] = most
				if ms < float64(most/time.Millisecond) {
					left[z.Member.(string)] = time.Duration(ms) * time.Millisecond
				}
			}
		}
		remaining[m.nodeIndex(n)] = left
		return OutcomeOK, nil
	})
	if rep.count(OutcomeOK) < m.quorum {
		return sent, remaining, m.roundError(rep)
	}
	return sent, remaining, nil
}
