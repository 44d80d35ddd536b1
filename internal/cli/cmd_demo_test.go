package cli

import (
	"context"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/internal/connect"
	"github.com/redlock/redlock/quorum"
	"github.com/redlock/redlock/topology"
)

// TestDemoEmbedded runs the demo without a terminal: five embedded masters, a
// worker holding a lock, and a console poll that sees the masters up and the lock held.
func TestDemoEmbedded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	set, c, err := startDemo(ctx, true)
	require.NoError(t, err)
	t.Cleanup(set.Close)
	require.True(t, set.Embedded)
	require.Len(t, c.Masters, 5)
	assert.False(t, c.RestartQuarantine, "brand-new masters without data: quarantine off")
	for _, p := range c.Validate() {
		assert.NotEqual(t, topology.SeverityError, p.Severity, "demo topology invalid: %v", p)
	}

	mgr, err := connect.Manager(c, quorum.WithOwner("demo-worker-test"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = mgr.Close() })
	wctx, stopWorker := context.WithCancel(ctx)
	roundDone := make(chan error, 1)
	go func() { roundDone <- demoHold(wctx, mgr, rand.New(rand.NewPCG(1, 2)), 10*time.Second, 0) }()

	src, _, cleanup, err := newClusterSource(c, sourceSettings{embedded: true})
	require.NoError(t, err)
	t.Cleanup(cleanup)
	var snap = src.Poll(ctx, nil)
	require.Eventually(t, func() bool {
		snap = src.Poll(ctx, nil)
		// A poll may land in the middle of the round: wait for every master's key.
		locks := snap.Merged()
		return len(locks) == 1 && locks[0].Votes == 5
	}, 5*time.Second, 50*time.Millisecond, "the worker's lock shows in a poll")
	require.NoError(t, snap.Err)
	require.Len(t, snap.Nodes, 5)
	for _, n := range snap.Nodes {
		assert.True(t, n.Reachable, "master %s: %s", n.Master, n.Error)
		assert.Equal(t, topology.StateUp, n.State(time.Now()), "master %s findings: %v", n.Master, n.Findings)
		assert.Empty(t, n.ConfigError, "embedded masters show unknown, not errors")
	}
	li := snap.Merged()[0]
	assert.Equal(t, admin.StateHeld, li.State)
	assert.Equal(t, 5, li.Votes, "%+v", li.Masters)
	assert.Contains(t, demoNames, li.Name)
	require.NotNil(t, li.Owner)
	assert.Equal(t, "demo-worker-test", li.Owner.Label)
	assert.Greater(t, li.Validity, time.Second)

	// The worker releases when stopped; the next poll, which reads the rows on
	// screen afresh, has no lock left.
	stopWorker()
	require.NoError(t, <-roundDone)
	snap = src.Poll(ctx, []string{li.Name})
	assert.Empty(t, snap.Merged())
}

func TestUpRefusesNonLoopback(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/redlock.hcl"
	require.NoError(t, os.WriteFile(path, []byte(`cluster "x" {
  key_prefix = "lock:"
  restart_quarantine = false
  master "a" { address = "127.0.0.1:1" }
  master "b" { address = "10.1.2.3:6379" }
  master "c" { address = "127.0.0.1:2" }
}
`), 0o600))
	var out, errb strings.Builder
	code := Main(context.Background(), &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }},
		[]string{"up", "-embedded", "-config", path})
	assert.Equal(t, ExitError, code)
	assert.Contains(t, errb.String(), "master b")
	assert.Contains(t, errb.String(), "not a loopback address")
	assert.Empty(t, out.String(), "nothing started")
}

func TestConsoleNeedsATerminal(t *testing.T) {
	var out, errb strings.Builder
	code := Main(context.Background(), &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }},
		[]string{"demo", "-embedded"})
	assert.Equal(t, ExitError, code)
	assert.Contains(t, errb.String(), "needs a terminal")
}

// The demo shows every kind of hold, not only plain locks: a semaphore's
// permits, a shared hold, a multi-name hold and a leader, each read by the
// console as what it is, on the embedded masters.
func TestBugDemoShowsEveryKind(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	set, c, err := startDemo(ctx, true)
	require.NoError(t, err)
	t.Cleanup(set.Close)
	mgr, err := connect.Manager(c, quorum.WithOwner("demo-worker-test"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = mgr.Close() })
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, len(demoKinds))
	for kind := range demoKinds {
		go func() { done <- demoHold(wctx, mgr, rand.New(rand.NewPCG(1, uint64(kind))), 10*time.Second, kind) }()
	}
	src, _, cleanup, err := newClusterSource(c, sourceSettings{embedded: true, interval: 100 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(cleanup)
	want := []string{"sem 1/3", "shared 1", "multi 2", "leader t1"}
	var kinds map[string]string
	require.Eventually(t, func() bool {
		names := []string{}
		for _, li := range src.Poll(ctx, nil).Merged() {
			names = append(names, li.Name)
		}
		kinds = src.Poll(ctx, names).Kinds
		got := map[string]bool{}
		for _, k := range kinds {
			got[k] = true
		}
		for _, w := range want {
			if !got[w] {
				return false
			}
		}
		return true
	}, 10*time.Second, 100*time.Millisecond, "the console reads every kind: %v", kinds)
	stop()
	for range demoKinds {
		<-done // each hold released (an extension the stop cut short may fail)
	}
}
