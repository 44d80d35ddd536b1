package e2e

import (
	"bufio"
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWatchJSONLines(t *testing.T) {
	e := newEnv(t)
	require.Equal(t, 0, e.run("acquire", "watched", "-ttl", "8s").code)
	cmd := e.command("", "watch", "-interval", "200ms", "-json")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for i := 0; i < 2; i++ {
		require.True(t, sc.Scan(), "line %d", i)
		var snap struct {
			Healthy int `json:"healthy"`
			Nodes   []struct {
				Master string `json:"master"`
				State  string `json:"state"`
			} `json:"nodes"`
			Locks []struct {
				Name  string `json:"name"`
				State string `json:"state"`
			} `json:"locks"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &snap), sc.Text())
		assert.Len(t, snap.Nodes, 5)
		assert.Equal(t, "up", snap.Nodes[0].State)
		require.Len(t, snap.Locks, 1)
		assert.Equal(t, "watched", snap.Locks[0].Name)
		assert.Equal(t, "held", snap.Locks[0].State)
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	assert.NoError(t, cmd.Wait(), "Ctrl-C ends watch with 0")
}

// Issue 23 item 16: watch without -json printed JSON anyway, and each line
// repeated every finding's text per master. Without -json it prints one short
// human line a snapshot; with -json each finding's text appears once a line.
func TestWatchHumanAndFindingsOnce(t *testing.T) {
	e := newEnv(t)
	e.acquireToken("watched", "-ttl", "8s")
	lines := func(args ...string) []string {
		cmd := e.command("", append([]string{"watch", "-interval", "100ms"}, args...)...)
		var out syncBuffer
		cmd.Stdout = &out
		require.NoError(t, cmd.Start())
		require.Eventually(t, func() bool { return strings.Count(out.String(), "\n") >= 2 }, 10*time.Second, 20*time.Millisecond)
		require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
		assert.NoError(t, cmd.Wait())
		return strings.Split(strings.TrimSpace(out.String()), "\n")
	}
	human := lines()
	assert.Regexp(t, `^\d\d:\d\d:\d\d  5/5 masters healthy \(quorum 3\)  locks: 1 held, 0 partial`, human[0])
	assert.NotContains(t, human[0], "{")
	for _, l := range lines("-json") {
		var snap struct {
			Findings []struct {
				Code    string   `json:"code"`
				Summary string   `json:"summary"`
				Masters []string `json:"masters"`
			} `json:"findings"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &snap), l)
		require.NotEmpty(t, snap.Findings)
		for _, f := range snap.Findings {
			assert.Equal(t, 1, strings.Count(l, f.Summary), "%s: its text once a line", f.Code)
			assert.Len(t, f.Masters, 5, f.Code)
		}
	}
}
