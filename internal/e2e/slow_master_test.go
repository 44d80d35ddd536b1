package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/faults"
)

// TestSlowMasterIsSlowNotDown: a master that answers, but later than the node
// timeout, was reported "down" (unreachable). It is "slow", with the time it took,
// and still does not count as healthy: a lock round gives up on it.
func TestSlowMasterIsSlowNotDown(t *testing.T) {
	e := newEnv(t)
	p := faults.NewProxy(t, e.c.Servers[4].Addr())
	p.SetLatency(0, 600*time.Millisecond) // node_timeout is 250ms
	cfg := e.withMasterAt(p.Addr(), false)
	r := e.run("nodes", "-config", cfg)
	row := ""
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(l, "e ") {
			row = l
		}
	}
	require.NotEmpty(t, row, r.stdout)
	assert.Regexp(t, `^e\s+\S+\s+slow\s+\d`, row, "slow, with the time its answer took")
	assert.Contains(t, r.stdout, "slow: answered in")
	assert.NotContains(t, r.stdout, "unreachable")
	assert.Contains(t, r.stdout, "4/5 masters healthy")

	r = e.run("nodes", "-config", cfg, "-json")
	doc := checkDoc(t, "nodes", r.stdout)
	assert.Contains(t, r.stdout, `"state": "slow"`, doc)
}
