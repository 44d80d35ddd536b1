package e2e

import (
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// scrape fetches /metrics and parses it with the Prometheus text parser.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return mfs
}

// value returns the value of the series of name whose labels include want, and
// whether it exists.
func value(mfs map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	mf := mfs[name]
	if mf == nil {
		return 0, false
	}
series:
	for _, m := range mf.GetMetric() {
		labels := map[string]string{}
		for _, lp := range m.GetLabel() {
			labels[lp.GetName()] = lp.GetValue()
		}
		for k, v := range want {
			if labels[k] != v {
				continue series
			}
		}
		switch {
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

// startScraped starts redlock with args and waits until addr serves /metrics.
func startScraped(t *testing.T, e *env, addr string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := e.command("", args...)
	var errb syncBuffer
	cmd.Stderr = &errb
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	}, 10*time.Second, 20*time.Millisecond, errb.String())
	return cmd
}

func TestExporterServesTheClusterAsSeenFromOutside(t *testing.T) {
	e := newEnv(t)
	addr := fmt.Sprintf("127.0.0.1:%d", redistest.FreePort(t))
	startScraped(t, e, addr, "exporter", "-listen", addr, "-interval", "200ms")
	e.acquireToken("billing/1", "-ttl", "9s")
	var mfs map[string]*dto.MetricFamily
	require.Eventually(t, func() bool {
		mfs = scrape(t, addr)
		v, _ := value(mfs, "redlock_locks", map[string]string{"state": "held"})
		return v == 1
	}, 5*time.Second, 50*time.Millisecond, "a lock taken shows as held")
	v, ok := value(mfs, "redlock_masters_healthy", nil)
	assert.True(t, ok)
	assert.Equal(t, 5.0, v)
	v, _ = value(mfs, "redlock_quorum", nil)
	assert.Equal(t, 3.0, v)
	_, ok = value(mfs, "redlock_build_info", nil)
	assert.True(t, ok)
	v, _ = value(mfs, "redlock_policy_locks", map[string]string{"policy": "default"})
	assert.Equal(t, 1.0, v)
	for name := range mfs {
		for _, m := range mfs[name].GetMetric() {
			for _, lp := range m.GetLabel() {
				assert.NotEqual(t, "billing/1", lp.GetValue(), "%s: the lock name is never a label", name)
			}
		}
	}

	killed := time.Now()
	e.c.Servers[2].Kill()
	require.Eventually(t, func() bool {
		v, ok := value(scrape(t, addr), "redlock_master_up", map[string]string{"master": e.c.Servers[2].Name})
		return ok && v == 0
	}, 3*time.Second, 20*time.Millisecond, "a killed master shows down within one interval")
	t.Logf("master down on /metrics %v after the kill (interval 200ms)", time.Since(killed))
}

// -metrics-addr on run serves the library metrics of that process.
func TestRunServesItsLockMetrics(t *testing.T) {
	e := newEnv(t)
	addr := fmt.Sprintf("127.0.0.1:%d", redistest.FreePort(t))
	startScraped(t, e, addr, "run", "capped/job", "-ttl", "2s", "-metrics-addr", addr, "--", "sleep", "5")
	var mfs map[string]*dto.MetricFamily
	require.Eventually(t, func() bool {
		mfs = scrape(t, addr)
		v, _ := value(mfs, "redlock_held_locks", map[string]string{"policy": "capped/*"})
		return v == 1
	}, 5*time.Second, 20*time.Millisecond)
	v, ok := value(mfs, "redlock_acquire_duration_seconds", map[string]string{"policy": "capped/*", "result": "acquired"})
	assert.True(t, ok)
	assert.Equal(t, 1.0, v)
	_, ok = value(mfs, "redlock_master_round_duration_seconds", map[string]string{"op": "acquire"})
	assert.True(t, ok)
	assert.True(t, strings.HasPrefix(addr, "127.0.0.1:"))
}

// The exporter counts each primitive once, for what it is, and what it counts
// is what was taken: permits held, shared holders, the election's term; a
// shared key or a leader's record is never an "orphaned" lock.
func TestExporterShowsThePrimitives(t *testing.T) {
	e := newEnv(t)
	addr := fmt.Sprintf("127.0.0.1:%d", redistest.FreePort(t))
	startScraped(t, e, addr, "exporter", "-listen", addr, "-interval", "200ms")
	e.acquireToken("sem", "-permits", "3", "-ttl", "9s")
	e.acquireToken("sem", "-permits", "3", "-ttl", "9s")
	e.acquireToken("doc", "-shared", "-ttl", "9s")
	e.acquireToken("doc", "-shared", "-ttl", "9s")
	e.acquireToken("doc", "-shared", "-ttl", "9s")
	e.acquireToken("a", "b", "-ttl", "9s")
	elect := e.start("elect", "crond", "-ttl", "9s", "--", "sleep", "30")
	e.waitKey("lock:crond:leader")
	ld := e.run("leader", "crond", "-json")
	require.Equal(t, 0, ld.code, ld.stderr)
	term := fmt.Sprint(checkDoc(t, "leader", ld.stdout)["term"])
	var mfs map[string]*dto.MetricFamily
	require.Eventually(t, func() bool {
		mfs = scrape(t, addr)
		v, _ := value(mfs, "redlock_primitives", map[string]string{"kind": "leader"})
		return v == 1
	}, 5*time.Second, 50*time.Millisecond, "the election shows")
	for kind, want := range map[string]float64{"semaphore": 1, "shared": 1, "multi": 1, "leader": 1, "lock": 0} {
		v, _ := value(mfs, "redlock_primitives", map[string]string{"kind": kind})
		assert.Equal(t, want, v, kind)
	}
	v, _ := value(mfs, "redlock_locks", map[string]string{"state": "held"})
	assert.Equal(t, 4.0, v, "each primitive counts once")
	v, _ = value(mfs, "redlock_locks", map[string]string{"state": "orphaned"})
	assert.Equal(t, 0.0, v, "no primitive's key reads as orphaned")
	v, _ = value(mfs, "redlock_policy_permits_held", map[string]string{"policy": "default"})
	assert.Equal(t, 2.0, v)
	v, _ = value(mfs, "redlock_policy_shared_holders", map[string]string{"policy": "default"})
	assert.Equal(t, 3.0, v)
	v, _ = value(mfs, "redlock_election_term", map[string]string{"election": "crond"})
	assert.Equal(t, term, fmt.Sprint(v))
	v, _ = value(mfs, "redlock_election_leading", map[string]string{"election": "crond"})
	assert.Equal(t, 1.0, v)
	_ = elect.cmd.Process.Signal(syscall.SIGTERM)
	elect.wait(t, 10*time.Second)
}
