package quorum

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/internal/wire"
)

// TestIssue23RunIDRaceConcurrentHandshakes: two handshakes on one master at once
// (the hot path's and go-redis's connections, both with the quarantine on) read and
// write the node's run_id; under -race this failed while observe read it before
// taking the node's lock.
func TestIssue23RunIDRaceConcurrentHandshakes(t *testing.T) {
	c := redistest.Start(t, 1, redistest.Options{})
	m := managerFor(t, c, WithRestartQuarantine(time.Second))
	n := m.nodes[0]
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for range 10 {
				// A new transport dials its own connection: a handshake.
				ps := m.newPipes([]wire.Master{{Addr: c.Servers[0].Addr()}})
				out := make([]wire.Result, 1)
				ps.Round(ctx, &wire.Cmd{Args: []string{"PING"}}, out)
				assert.NoError(t, out[0].Err)
				_ = ps.Close()
			}
		})
	}
	wg.Go(func() {
		for range 10 {
			// A fresh go-redis connection runs the OnConnect handshake.
			cn := n.client.Conn()
			assert.NoError(t, cn.Ping(ctx).Err())
			_ = cn.Close()
		}
	})
	wg.Wait()
	n.mu.Lock()
	defer n.mu.Unlock()
	assert.NotEmpty(t, n.runID)
}

// TestIssue23InfoFailureIsNotPermissionAdvice: with the quarantine on, a handshake
// whose INFO fails for another reason than a permission (a peer that closes the
// connection, a paused master) says what happened, and no advice about +info is
// stored and appended to the master's later errors. A NOPERM reply still gives the
// advice.
func TestIssue23InfoFailureIsNotPermissionAdvice(t *testing.T) {
	ctx := context.Background()
	t.Run("peer closes the connection", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		t.Cleanup(func() { _ = ln.Close() })
		go func() {
			for {
				cn, err := ln.Accept()
				if err != nil {
					return
				}
				buf := make([]byte, 64)
				_, _ = cn.Read(buf)
				_ = cn.Close()
			}
		}()
		m, err := New([]Node{{Name: "eof", Addr: ln.Addr().String()}}, WithRestartQuarantine(time.Second), WithNodeTimeout(500*time.Millisecond))
		require.NoError(t, err)
		t.Cleanup(func() { _ = m.Close() })
		_, err = m.TryAcquire(ctx, "x", time.Second)
		require.Error(t, err)
		assert.NotContains(t, err.Error(), "+info")
		assert.Contains(t, err.Error(), "restart quarantine: INFO server")
		assert.NoError(t, m.nodes[0].connectErr, "no advice stored")
	})
	t.Run("paused master", func(t *testing.T) {
		c := redistest.Start(t, 1, redistest.Options{})
		m := managerFor(t, c, WithRestartQuarantine(time.Second), WithNodeTimeout(100*time.Millisecond))
		c.Servers[0].Stop()
		_, err := m.TryAcquire(ctx, "x", time.Second)
		c.Servers[0].Cont()
		require.Error(t, err)
		assert.NotContains(t, err.Error(), "+info")
		m.nodes[0].mu.Lock()
		stored := m.nodes[0].connectErr
		m.nodes[0].mu.Unlock()
		assert.NoError(t, stored, "no advice stored")
		c.Servers[0].Kill()
		_, err = m.TryAcquire(ctx, "y", time.Second)
		require.Error(t, err)
		assert.NotContains(t, err.Error(), "+info", "a later error carries no stale advice")
	})
	t.Run("NOPERM", func(t *testing.T) {
		c := redistest.Start(t, 1, redistest.Options{})
		require.NoError(t, c.Servers[0].Client().Do(ctx, "ACL", "SETUSER", "noinfo", "on", ">pw", "~*", "&*", "+@all", "-info").Err())
		m, err := New([]Node{{Name: "a", Addr: c.Servers[0].Addr(), Username: "noinfo", Password: "pw"}},
			WithRestartQuarantine(time.Second), WithNodeTimeout(500*time.Millisecond))
		require.NoError(t, err)
		t.Cleanup(func() { _ = m.Close() })
		_, err = m.TryAcquire(ctx, "x", time.Second)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "grant +info")
		assert.Contains(t, err.Error(), "NOPERM")
	})
}
