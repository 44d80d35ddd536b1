package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// upTopology writes a topology of n masters on free loopback ports.
func upTopology(t *testing.T, n int) string {
	var b strings.Builder
	b.WriteString("cluster \"up\" {\n  restart_quarantine = false\n")
	for i := range n {
		fmt.Fprintf(&b, "  master \"m%d\" { address = \"127.0.0.1:%d\" }\n", i, redistest.FreePort(t))
	}
	b.WriteString("}\n")
	p := filepath.Join(t.TempDir(), "up.hcl")
	require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o600))
	return p
}

// A second up on the same ports fails at once naming the port, instead of
// reporting masters it never started.
func TestUpFailsFastOnAPortInUse(t *testing.T) {
	e := newEnv(t) // its masters hold the ports of e.config
	r := e.run("up", "-config", e.config)
	assert.Equal(t, 1, r.code, r.stderr)
	assert.Contains(t, r.stderr, "port in use")
	assert.Contains(t, r.stderr, e.c.Servers[0].Addr())
	assert.NotContains(t, r.stdout, "redis-server, pid")
}

// up supervises: a master killed while up runs is reported and, with -restart,
// started again; Ctrl-C stops everything.
func TestUpReportsAndRestartsAMasterThatDies(t *testing.T) {
	cfg := upTopology(t, 3)
	cmd := (&env{t: t}).command("", "up", "-restart", "-config", cfg)
	var out, errb syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	pids := regexp.MustCompile(`master m0 \S+ \(redis-server, pid (\d+)\)`)
	require.Eventually(t, func() bool { return pids.MatchString(out.String()) }, 20*time.Second, 20*time.Millisecond, out.String()+errb.String())
	pid, _ := strconv.Atoi(pids.FindStringSubmatch(out.String())[1])
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "restarted") }, 20*time.Second, 20*time.Millisecond, out.String()+errb.String())
	assert.Contains(t, errb.String(), "master m0")
	assert.Contains(t, errb.String(), "exited")
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	require.NoError(t, cmd.Wait())
	m := regexp.MustCompile(`pid (\d+)`).FindAllStringSubmatch(out.String(), -1)
	require.Len(t, m, 4)
	for _, p := range m {
		n, _ := strconv.Atoi(p[1])
		assert.Eventually(t, func() bool { return syscall.Kill(n, 0) != nil }, 5*time.Second, 20*time.Millisecond, "redis-server %d left running", n)
	}
}
