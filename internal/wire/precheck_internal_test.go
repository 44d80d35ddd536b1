//go:build unix

package wire

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// TestPrecheckPollsIdleMasters: a round over idle masters looks at their sockets
// in one poll, and marks quiet the connections with nothing to read, and busy a
// connection the master closed (which writeBatch then peeks, and drops); the
// round itself then succeeds on every master (a new connection for the closed
// one). A busy first pipe, or a single idle one, makes no poll.
func TestPrecheckPollsIdleMasters(t *testing.T) {
	c := redistest.Start(t, 3, redistest.Options{})
	var masters []Master
	for _, a := range c.Addrs() {
		masters = append(masters, Master{Addr: a})
	}
	ps := New(masters, Config{Timeout: time.Second})
	t.Cleanup(func() { _ = ps.Close() })
	ctx := context.Background()
	out := make([]Result, 3)
	ping := &Cmd{Args: []string{"PING"}, Want: "+"}
	ps.Round(ctx, ping, out) // connects
	for i, r := range out {
		require.NoError(t, r.Err, "master %d", i)
	}

	polled := func() (conns []bool, busy []bool) {
		rd := ps.rounds.get(len(ps.pipes))
		defer ps.rounds.put(rd)
		for i := range rd.reqs {
			rd.reqs[i].polled = nil
		}
		ps.precheck(rd)
		for i := range rd.reqs {
			conns = append(conns, rd.reqs[i].polled != nil)
			busy = append(busy, rd.reqs[i].pollBusy)
		}
		return conns, busy
	}
	// The pump that dialled a connection may still be ending after the reply.
	require.Eventually(t, func() bool {
		conns, _ := polled()
		return conns[0] && conns[1] && conns[2]
	}, 5*time.Second, time.Millisecond, "every idle master polled")
	conns, busy := polled()
	assert.Equal(t, []bool{true, true, true}, conns, "every idle master polled")
	assert.Equal(t, []bool{false, false, false}, busy)

	// Master 1 closes its clients' connections: its socket reads EOF.
	require.NoError(t, c.Servers[1].Client().ClientKillByFilter(ctx, "TYPE", "normal").Err())
	require.Eventually(t, func() bool { _, b := polled(); return b[1] }, 5*time.Second, 10*time.Millisecond)
	_, busy = polled()
	assert.Equal(t, []bool{false, true, false}, busy)
	ps.Round(ctx, ping, out)
	for i, r := range out {
		require.NoError(t, r.Err, "master %d after its connection was closed", i)
		assert.Equal(t, "PONG", r.Str)
	}

	// A busy first pipe: no poll.
	p0 := ps.pipes[0]
	p0.mu.Lock()
	p0.driving = true
	p0.mu.Unlock()
	conns, _ = polled()
	assert.Equal(t, []bool{false, false, false}, conns)
	p0.mu.Lock()
	p0.driving = false
	p0.mu.Unlock()
}
