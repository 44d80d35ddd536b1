package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/redlock/redlock/internal/redistest"
)

// metricNames returns the redlock_* metric names an expression file uses, with
// histogram suffixes removed.
func metricNames(t *testing.T, text string) []string {
	seen := map[string]bool{}
	for _, m := range regexp.MustCompile(`\bredlock_[a-z_]+`).FindAllString(text, -1) {
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			m = strings.TrimSuffix(m, suffix)
		}
		seen[m] = true
	}
	var out []string
	for m := range seen {
		out = append(out, m)
	}
	sort.Strings(out)
	require.NotEmpty(t, out)
	return out
}

// Every metric the example alerts and dashboard use is one a real scrape shows: the
// exporter's, and a run process's (which has taken, and lost, a lock).
func TestMonitoringExamplesUseRealMetrics(t *testing.T) {
	e := newEnv(t)
	exp := fmt.Sprintf("127.0.0.1:%d", redistest.FreePort(t))
	startScraped(t, e, exp, "exporter", "-listen", exp, "-interval", "200ms")
	run := fmt.Sprintf("127.0.0.1:%d", redistest.FreePort(t))
	startScraped(t, e, run, "run", "mon", "-ttl", "9s", "-metrics-addr", run, "--", "sh", "-c", `trap "sleep 5" TERM; sleep 30`)
	e.waitKey("lock:mon")
	r := e.run("force-expire", "mon", "-yes", "-now")
	require.Equal(t, 0, r.code, r.stderr)
	all := map[string]*dto.MetricFamily{}
	require.Eventually(t, func() bool {
		for k, v := range scrape(t, run) {
			all[k] = v
		}
		_, lost := value(all, "redlock_lost_total", map[string]string{"cause": "majority_lost"})
		return lost
	}, 3*time.Second, 20*time.Millisecond, "the run process counts the lost lock")
	for k, v := range scrape(t, exp) {
		all[k] = v
	}

	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	alerts, err := os.ReadFile(filepath.Join(root, "examples", "prometheus", "alerts.yml"))
	require.NoError(t, err)
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	require.NoError(t, yaml.Unmarshal(alerts, &rules), "alerts.yml is valid YAML")
	require.NotEmpty(t, rules.Groups)
	var exprs []string
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			require.NotEmpty(t, r.Expr, r.Alert)
			exprs = append(exprs, r.Expr)
		}
	}
	dash, err := os.ReadFile(filepath.Join(root, "examples", "grafana", "redlock.json"))
	require.NoError(t, err)
	for _, text := range []string{strings.Join(exprs, "\n"), string(dash)} {
		for _, name := range metricNames(t, text) {
			assert.Contains(t, all, name, "%s is used by an example but no scrape shows it", name)
		}
	}
}
