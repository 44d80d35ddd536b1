package metrics

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/quorum"
	"github.com/redlock/redlock/quorum/observe"
)

func manager(t *testing.T, c *redistest.Cluster, o observe.Observer) *quorum.Manager {
	t.Helper()
	var nodes []quorum.Node
	for _, s := range c.Servers {
		nodes = append(nodes, quorum.Node{Name: s.Name, Addr: s.Addr()})
	}
	m, err := quorum.New(nodes, quorum.WithRestartQuarantine(0), quorum.WithObserver(o), quorum.WithRetry(50, 20*time.Millisecond, 5*time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// The metrics after real operations on real masters: acquired, waited, extended,
// released and lost, with bounded labels only, and lint-clean.
func TestMetricsAfterRealOperations(t *testing.T) {
	c := redistest.Start(t, 3, redistest.Options{})
	reg := prometheus.NewPedanticRegistry()
	o, err := New(reg, func(name string) string {
		if strings.HasPrefix(name, "billing/") {
			return "billing/*"
		}
		return DefaultPolicy
	})
	require.NoError(t, err)
	m := manager(t, c, o)
	ctx := context.Background()

	l, err := m.TryAcquire(ctx, "billing/1", time.Second)
	require.NoError(t, err)
	assert.Equal(t, 1.0, testutil.ToFloat64(o.held.WithLabelValues("billing/*")))
	require.NoError(t, l.Extend(ctx, time.Second))
	assert.Equal(t, 1.0, testutil.ToFloat64(o.extend.WithLabelValues("billing/*", observe.ResultExtended)))

	// A second client waits until the first releases: a histogram count for an
	// acquisition that waited.
	done := make(chan struct{})
	go func() {
		defer close(done)
		l2, err := m.Acquire(ctx, "billing/1", time.Second)
		if assert.NoError(t, err) {
			_ = l2.Release(ctx)
		}
	}()
	time.Sleep(100 * time.Millisecond)
	require.NoError(t, l.Release(ctx))
	<-done
	assert.Equal(t, 0.0, testutil.ToFloat64(o.held.WithLabelValues("billing/*")))
	assert.Equal(t, 1, testutil.CollectAndCount(o.holdDuration), "one series: one policy")

	_, err = m.TryAcquire(ctx, "other", 50*time.Millisecond)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		return testutil.ToFloat64(o.lost.WithLabelValues(DefaultPolicy, observe.CauseExpired)) == 1
	}, 2*time.Second, 5*time.Millisecond, "a lock left to expire is lost")
	assert.Equal(t, 0.0, testutil.ToFloat64(o.held.WithLabelValues(DefaultPolicy)))

	c.Servers[2].Kill()
	_, _ = m.TryAcquire(ctx, "billing/2", time.Second)
	assert.GreaterOrEqual(t, testutil.ToFloat64(o.masterErrors.WithLabelValues(c.Servers[2].Name, "error")), 1.0)

	problems, err := testutil.CollectAndLint(o.acquireDuration)
	require.NoError(t, err)
	assert.Empty(t, problems)
	mfs, err := reg.Gather()
	require.NoError(t, err)
	var names []string
	for _, mf := range mfs {
		names = append(names, mf.GetName())
		for _, mm := range mf.GetMetric() {
			for _, lp := range mm.GetLabel() {
				assert.NotContains(t, []string{"name", "lock", "key"}, lp.GetName(), "no unbounded label")
				assert.NotEqual(t, "billing/1", lp.GetValue(), "the raw lock name is never a label value")
			}
		}
	}
	for _, want := range []string{"redlock_acquire_duration_seconds", "redlock_held_locks", "redlock_hold_duration_seconds",
		"redlock_lost_total", "redlock_extend_total", "redlock_master_round_duration_seconds", "redlock_master_errors_total"} {
		assert.Contains(t, names, want)
	}
	// The acquisition that waited is counted with its wait.
	count := 0
	for _, mf := range mfs {
		if mf.GetName() == "redlock_acquire_duration_seconds" {
			for _, mm := range mf.GetMetric() {
				count += int(mm.GetHistogram().GetSampleCount())
				if mm.GetHistogram().GetSampleSum() >= 0.09 {
					t.Logf("an acquisition waited %.3fs", mm.GetHistogram().GetSampleSum())
				}
			}
		}
	}
	assert.GreaterOrEqual(t, count, 4)
}

// The cost of the hook: an uncontended acquire/release cycle with and without the
// Prometheus observer, side by side in one run.
func BenchmarkCycleObserver(b *testing.B) {
	c := redistest.Start(b, 3, redistest.Options{})
	for _, tc := range []struct {
		name string
		obs  func() observe.Observer
	}{
		{"none", func() observe.Observer { return nil }},
		{"prometheus", func() observe.Observer {
			o, err := New(prometheus.NewRegistry(), nil)
			require.NoError(b, err)
			return o
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var nodes []quorum.Node
			for _, s := range c.Servers {
				nodes = append(nodes, quorum.Node{Name: s.Name, Addr: s.Addr()})
			}
			opts := []quorum.Option{quorum.WithRestartQuarantine(0)}
			if o := tc.obs(); o != nil {
				opts = append(opts, quorum.WithObserver(o))
			}
			m, err := quorum.New(nodes, opts...)
			require.NoError(b, err)
			defer m.Close()
			ctx := context.Background()
			b.ResetTimer()
			for b.Loop() {
				l, err := m.TryAcquire(ctx, "bench", time.Second)
				if err != nil {
					b.Fatal(err)
				}
				_ = l.Release(ctx)
			}
		})
	}
}
