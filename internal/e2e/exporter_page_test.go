package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/redlock/redlock/internal/redistest"
)

// Regression (issue 23 item 16): the exporter's / was a 404. It serves a small page
// linking /metrics; other paths stay 404.
func TestExporterRootLinksTheMetrics(t *testing.T) {
	e := newEnv(t)
	addr := fmt.Sprintf("127.0.0.1:%d", redistest.FreePort(t))
	startScraped(t, e, addr, "exporter", "-listen", addr, "-interval", "1s")
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + addr + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	code, body := get("/")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, `<a href="/metrics">`)
	code, _ = get("/nothing-here")
	assert.Equal(t, http.StatusNotFound, code)
}

// Regression (issue 23 item 16): the example alert rules had no alert for an absent
// exporter or a stale poll (the other alerts go silent then).
func TestExampleAlertsCoverAnAbsentExporterAndAStalePoll(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	src, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "examples", "prometheus", "alerts.yml"))
	require.NoError(t, err)
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
				For   string `yaml:"for"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	require.NoError(t, yaml.Unmarshal(src, &rules))
	var absent, stale bool
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			expr := strings.Join(strings.Fields(r.Expr), " ")
			if expr == "absent(redlock_poll_timestamp_seconds)" {
				absent = r.For != ""
			}
			if strings.HasPrefix(expr, "time() - redlock_poll_timestamp_seconds >") {
				stale = r.For != ""
			}
		}
	}
	assert.True(t, absent, "an alert fires when no exporter is scraped")
	assert.True(t, stale, "an alert fires when the exporter's last poll is old")
}
