package quorum

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/checker"
	"github.com/redlock/redlock/internal/defaults"
)

// TestBugQuiescenceTakesALateCommandForALeftKey (CI, 2026-11-27: the nemesis
// soak's "key lock:scenario/resource left after release and quiescence (PTTL
// 197ms)" on all five masters, with every master timing out in the last 100ms of
// the run: a machine stall, after which the masters ran an acquisition's SET
// written before the end): a key that a master sets after the clients stopped
// expires within its TTL, and quiesce waits for it; a key written again and
// again (something still running) or one without a TTL is still a violation.
func TestBugQuiescenceTakesALateCommandForALeftKey(t *testing.T) {
	const ttl = 300 * time.Millisecond
	key := defaults.KeyPrefix + "scenario/late"
	tests := []struct {
		name  string
		write func(ctx context.Context, s *scen)
		kinds []string
	}{
		{"one late SET PX", func(ctx context.Context, s *scen) {
			time.Sleep(ttl + 50*time.Millisecond) // after the first wait's start, before its end
			require.NoError(t, s.server("a").Client().Set(ctx, key, "rl1.late", ttl).Err())
		}, nil},
		{"written again and again", func(ctx context.Context, s *scen) {
			for ctx.Err() == nil {
				_ = s.server("a").Client().Set(context.Background(), key, "rl1.again", ttl).Err()
				time.Sleep(ttl / 3)
			}
		}, []string{checker.KindLeftover}},
		{"without a TTL", func(ctx context.Context, s *scen) {
			require.NoError(t, s.server("a").Client().Set(ctx, key, "rl1.forever", 0).Err())
		}, []string{checker.KindNoTTL, checker.KindLeftover}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newScen(t, mutants{}, 1)
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			wg.Go(func() { tt.write(ctx, s) })
			s.quiesce(ttl)
			cancel()
			wg.Wait()
			var kinds []string
			for _, v := range s.rec.Violations() {
				kinds = append(kinds, v.Kind)
			}
			assert.Equal(t, tt.kinds, kinds)
		})
	}
}
