package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// TestBugExporterHelpListsEveryMetric: exporter -h listed the metrics by hand and
// missed redlock_primitives, redlock_policy_permits_held, ..._shared_holders and
// redlock_election_*. Every metric served while every kind of hold is live is in
// the help.
func TestBugExporterHelpListsEveryMetric(t *testing.T) {
	e := newEnv(t)
	addr := fmt.Sprintf("127.0.0.1:%d", redistest.FreePort(t))
	startScraped(t, e, addr, "exporter", "-listen", addr, "-interval", "200ms")
	e.acquireToken("sem", "-permits", "3", "-ttl", "9s")
	e.acquireToken("doc", "-shared", "-ttl", "9s")
	e.acquireToken("a", "b", "-ttl", "9s")
	e.acquireToken("plain", "-ttl", "9s")
	e.start("elect", "crond", "-ttl", "9s", "--", "sleep", "30")
	e.waitKey("lock:crond:leader")
	var mfs map[string]*dto.MetricFamily
	require.Eventually(t, func() bool {
		mfs = scrape(t, addr)
		_, ok := value(mfs, "redlock_election_term", map[string]string{"election": "crond"})
		return ok
	}, 5*time.Second, 50*time.Millisecond, "the election shows")
	help := e.run("exporter", "-h")
	require.Equal(t, 0, help.code)
	for _, name := range []string{"redlock_primitives", "redlock_policy_permits_held", "redlock_policy_shared_holders",
		"redlock_election_term", "redlock_election_leading", "redlock_build_info"} {
		assert.Contains(t, mfs, name, "served")
	}
	listed := map[string][]string{} // name: labels, as exporter -h lists them
	for _, m := range regexp.MustCompile(`(redlock_\w+)(?:\{([^}]*)\})?`).FindAllStringSubmatch(help.stdout, -1) {
		listed[m[1]] = strings.Split(m[2], ",")
	}
	for name, mf := range mfs {
		if strings.HasPrefix(name, "promhttp_") {
			continue // the HTTP handler's own, which the help names as such
		}
		labels, ok := listed[name]
		if !assert.True(t, ok, "exporter -h lists %s", name) || len(mf.GetMetric()) == 0 {
			continue
		}
		for _, lp := range mf.GetMetric()[0].GetLabel() {
			assert.Contains(t, labels, lp.GetName(), "exporter -h lists %s with its label %s", name, lp.GetName())
		}
	}
	assert.Contains(t, help.stdout, "promhttp_")
}
