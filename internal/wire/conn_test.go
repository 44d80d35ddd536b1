package wire_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/internal/wire"
)

// sendOK sends args on c and reads its +OK.
func sendOK(t *testing.T, c *wire.Conn, args ...string) {
	t.Helper()
	require.NoError(t, c.Send(wire.AppendCommand(nil, args...)))
	require.NoError(t, c.OK(), "%v", args[0])
}

// A Conn dialled as the pipes dial (AUTH with a username, SELECT, TLS) reads
// an array of bulk strings into one buffer of the caller's, reads past the one
// longer than the cap without keeping it and stays in step; an error reply is an
// ErrorReply that leaves it in step too, and a script the master lost
// (SCRIPT FLUSH) runs again with EVAL.
func TestConnReadsLongRepliesIntoTheCallersBuffer(t *testing.T) {
	for _, tc := range []struct {
		name string
		tls  bool
	}{{"tcp", false}, {"tls", true}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Start(t, 1, redistest.Options{TLS: tc.tls}).Servers[0]
			ctx := context.Background()
			require.NoError(t, srv.Client().ACLSetUser(ctx, "lister", "on", ">pw", "~*", "&*", "+@all").Err())
			m := wire.Master{Addr: srv.Addr(), Username: "lister", Password: "pw", DB: 3, TLS: srv.TLSConfig()}
			c, err := wire.Dial(ctx, m, time.Now().Add(5*time.Second))
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Close() })
			stop := c.Bind(ctx, time.Now().Add(5*time.Second))
			defer stop()

			big := strings.Repeat("x", 2<<20)
			sendOK(t, c, "SET", "a", "short")
			sendOK(t, c, "SET", "b", big)
			sendOK(t, c, "SET", "c", "")
			require.NoError(t, c.Send(wire.AppendCommand(nil, "HSET", "h", "f", "v")))
			_, err = c.Header(':')
			require.NoError(t, err)

			require.NoError(t, c.Send(wire.AppendCommand(nil, "MGET", "a", "b", "c")))
			n, err := c.Header('*')
			require.NoError(t, err)
			require.EqualValues(t, 3, n)
			var buf []byte
			var kept []bool
			for range n {
				var k bool
				buf, k, err = c.Bulk(buf, 1<<20)
				require.NoError(t, err)
				kept = append(kept, k)
			}
			assert.Equal(t, "short", string(buf), "the long value read past, nothing of it kept")
			assert.Equal(t, []bool{true, false, true}, kept)

			require.NoError(t, c.Send(wire.AppendCommand(nil, "GETRANGE", "h", "0", "10")))
			_, _, err = c.Bulk(nil, 10)
			var re wire.ErrorReply
			require.True(t, errors.As(err, &re), "%v", err)
			assert.True(t, strings.HasPrefix(string(re), "WRONGTYPE"), "%s", re)

			require.NoError(t, c.Send(wire.AppendCommand(nil, "DBSIZE")))
			size, err := c.Header(':')
			require.NoError(t, err)
			assert.EqualValues(t, 4, size, "the keys of db 3")

			s := wire.NewScript("return {KEYS[1], ARGV[1]}")
			for range 2 {
				sendOK(t, c, "SCRIPT", "FLUSH")
				n, err := c.Script(s, []string{"k"}, []string{"v"}, '*')
				require.NoError(t, err)
				require.EqualValues(t, 2, n)
				buf, _, err = c.Bulk(buf[:0], 10)
				require.NoError(t, err)
				buf, _, err = c.Bulk(buf, 10)
				require.NoError(t, err)
				assert.Equal(t, "kv", string(buf))
				n, err = c.Script(s, []string{"k2"}, []string{"v2"}, '*') // EVALSHA, the script loaded now
				require.NoError(t, err)
				require.EqualValues(t, 2, n)
				buf, _, _ = c.Bulk(buf[:0], 10)
				buf, _, err = c.Bulk(buf, 10)
				require.NoError(t, err)
				assert.Equal(t, "k2v2", string(buf))
			}
		})
	}
}

// A Conn's dial fails with the master's refusal named (a wrong password), and
// a read on a paused master ends as soon as its context is cancelled, not at
// the deadline, even when the deadline is moved on after the cancellation.
func TestConnRefusedAndCancelled(t *testing.T) {
	srv := redistest.Start(t, 1, redistest.Options{}).Servers[0]
	ctx := context.Background()
	require.NoError(t, srv.Client().ConfigSet(ctx, "requirepass", "pw").Err())
	_, err := wire.Dial(ctx, wire.Master{Addr: srv.Addr(), Password: "bad"}, time.Now().Add(5*time.Second))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "AUTH: WRONGPASS")

	c, err := wire.Dial(ctx, wire.Master{Addr: srv.Addr(), Password: "pw"}, time.Now().Add(5*time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	srv.Stop()
	t.Cleanup(srv.Cont)
	cctx, cancel := context.WithCancel(ctx)
	stop := c.Bind(cctx, time.Now().Add(time.Minute))
	defer stop()
	require.NoError(t, c.Send(wire.AppendCommand(nil, "DBSIZE")))
	time.AfterFunc(100*time.Millisecond, cancel)
	t0 := time.Now()
	_, err = c.Header(':')
	require.Error(t, err)
	assert.Less(t, time.Since(t0), 30*time.Second, "the read ended with the cancellation, not the minute's deadline")

	// A deadline moved on after the cancellation does not undo it.
	c.Extend(cctx, time.Now().Add(time.Minute))
	t0 = time.Now()
	_, err = c.Header(':')
	require.Error(t, err)
	assert.Less(t, time.Since(t0), 30*time.Second, "Extend after the cancellation: the read still ends at once")
}
