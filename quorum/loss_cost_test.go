package quorum

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// infoNum reads one numeric field of INFO section on s.
func infoNum(t *testing.T, s *redistest.Server, section, field string) float64 {
	info, err := s.Client().Info(context.Background(), section).Result()
	require.NoError(t, err)
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			f, err := strconv.ParseFloat(v, 64)
			require.NoError(t, err, line)
			return f
		}
	}
	t.Fatalf("no %s in INFO %s", field, section)
	return 0
}

// TestLossWatchCost measures what the loss watch costs at the masters with
// REDLOCK_LOSS_COST locks held (10000 in SAFETY.md): connections, memory,
// tracked keys, and the masters' CPU while the holders extend once. Off
// unless REDLOCK_LOSS_COST is set.
func TestLossWatchCost(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("REDLOCK_LOSS_COST"))
	if n == 0 {
		t.Skip("REDLOCK_LOSS_COST not set")
	}
	for _, watch := range []bool{false, true} {
		t.Run(fmt.Sprintf("watch=%v", watch), func(t *testing.T) {
			c, m := testCluster(t, 5)
			s := c.Servers[0]
			ctx := context.Background()
			var opts []LockOption
			if watch {
				opts = append(opts, WithLossWatch())
			}
			memBefore := infoNum(t, s, "memory", "used_memory")
			var ms0 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms0)
			locks := make([]*Lock, n)
			for i := range locks {
				l, err := m.Acquire(ctx, fmt.Sprintf("cost/%d", i), 5*time.Minute, opts...)
				require.NoError(t, err)
				locks[i] = l
			}
			time.Sleep(2 * time.Second) // every key read
			var ms1 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms1)
			mem := infoNum(t, s, "memory", "used_memory") - memBefore
			cpu0 := infoNum(t, s, "cpu", "used_cpu_sys") + infoNum(t, s, "cpu", "used_cpu_user")
			t0 := time.Now()
			for _, l := range locks {
				require.NoError(t, l.Extend(ctx, 5*time.Minute))
			}
			time.Sleep(time.Second) // the re-reads after the extensions' invalidations
			cpu := infoNum(t, s, "cpu", "used_cpu_sys") + infoNum(t, s, "cpu", "used_cpu_user") - cpu0
			t.Logf("%d locks, watch=%v: master memory +%.0f B (%.0f B/lock), tracked keys %.0f, clients %.0f, client heap +%d B (%d B/lock), master CPU for one extension of each %.2fs over %v",
				n, watch, mem, mem/float64(n), infoNum(t, s, "stats", "tracking_total_keys"), infoNum(t, s, "clients", "connected_clients"),
				ms1.HeapAlloc-ms0.HeapAlloc, (ms1.HeapAlloc-ms0.HeapAlloc)/uint64(n), cpu, time.Since(t0).Round(time.Millisecond))
			for _, l := range locks {
				require.NoError(t, l.Err())
			}
		})
	}
}
