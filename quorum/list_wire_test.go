package quorum

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/keyspace"
	"github.com/redlock/redlock/internal/redistest"
)

// countHook counts the commands a go-redis client sends.
type countHook struct{ n atomic.Int64 }

func (h *countHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *countHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmd)
	}
}
func (h *countHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.n.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// commandCalls returns how many times each of cmds ran on s (INFO commandstats).
func commandCalls(t *testing.T, s *redistest.Server, cmds ...string) map[string]int {
	t.Helper()
	info, err := s.Client().Info(context.Background(), "commandstats").Result()
	require.NoError(t, err)
	out := map[string]int{}
	for _, c := range cmds {
		v := infoField(info, "cmdstat_"+c)
		calls, _, _ := strings.Cut(strings.TrimPrefix(v, "calls="), ",")
		out[c], _ = strconv.Atoi(calls)
	}
	return out
}

// TestListingsGoThroughTheListingConnection: a Scanner's pass, Inspect and
// Describe (with keys that need list_read.lua: another type, a value past the
// read cap; and after SCRIPT FLUSH, which makes EVALSHA answer NOSCRIPT) send
// DBSIZE, SCAN, their reads and the script on the listing's own connection
// (wire.Conn), and nothing through go-redis; what they list is what the masters
// hold.
func TestListingsGoThroughTheListingConnection(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3)
	hooks := make([]*countHook, len(m.nodes))
	for i, n := range m.nodes {
		hooks[i] = &countHook{}
		n.client.AddHook(hooks[i])
	}
	l, err := m.TryAcquire(ctx, "plain", time.Minute)
	require.NoError(t, err)
	long := strings.Repeat("v", keyspace.ValueReadCap+10)
	for _, s := range c.Servers {
		require.NoError(t, s.Client().HSet(ctx, "lock:ahash", "f", "1").Err())
		require.NoError(t, s.Client().Set(ctx, "lock:along", long, 0).Err())
		require.NoError(t, s.Client().ConfigResetStat(ctx).Err())
	}
	check := func(t *testing.T, lst *lockListing) {
		t.Helper()
		byName := map[string]*lockInfo{}
		for i := range lst.Locks {
			byName[lst.Locks[i].Name] = &lst.Locks[i]
		}
		require.Contains(t, byName, "plain")
		assert.Equal(t, l.Token(), byName["plain"].Value)
		require.Contains(t, byName, "ahash")
		assert.Equal(t, "hash", byName["ahash"].KeyType())
		require.Contains(t, byName, "along")
		assert.Equal(t, 3, byName["along"].Votes)
		for _, a := range lst.Masters {
			assert.True(t, a.Answered, "%s: %v", a.Master, a.Err)
		}
	}
	for _, s := range c.Servers {
		require.NoError(t, s.Client().ScriptFlush(ctx).Err())
	}
	s := m.newScanner("")
	scanAll(t, s)
	lst, err := s.Listing()
	require.NoError(t, err)
	check(t, lst)
	lst, err = m.inspect(ctx, "")
	require.NoError(t, err)
	check(t, lst)
	for _, s := range c.Servers {
		require.NoError(t, s.Client().ScriptFlush(ctx).Err())
	}
	lst, err = m.describe(ctx, []string{"plain", "ahash", "along"})
	require.NoError(t, err)
	check(t, lst)

	for i, s := range c.Servers {
		assert.Zero(t, hooks[i].n.Load(), "master %d: commands through go-redis", i)
		calls := commandCalls(t, s, "dbsize", "scan", "exec", "evalsha", "eval")
		assert.Positive(t, calls["dbsize"], "master %d: %v", i, calls)
		assert.Positive(t, calls["scan"], "master %d: %v", i, calls)
		assert.Positive(t, calls["exec"], "master %d: %v", i, calls)
		assert.Positive(t, calls["evalsha"], "master %d: %v", i, calls)
		assert.Equal(t, 2, calls["eval"], "master %d: EVAL once after each SCRIPT FLUSH: %v", i, calls)
	}
}

// TestBugListingWaitsOutAPausedMaster: a Scanner's step (its DBSIZE) and a
// Describe (list_read.lua) cancelled while a master is paused return when they
// are cancelled, with the other masters read, not at the end of the listing's
// per-call timeout (their go-redis calls heeded a context's deadline but not
// its cancellation).
func TestBugListingWaitsOutAPausedMaster(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3, WithNodeTimeout(4*time.Second))
	_, err := m.TryAcquire(ctx, "paused", time.Minute)
	require.NoError(t, err)
	tests := []struct {
		name string
		list func(ctx context.Context) (*lockListing, error)
	}{
		{"scanner step", func(ctx context.Context) (*lockListing, error) {
			s := m.newScanner("")
			if err := s.Step(ctx); err != nil {
				return nil, err
			}
			return s.Listing()
		}},
		{"describe", func(ctx context.Context) (*lockListing, error) { return m.describe(ctx, []string{"paused"}) }},
		{"inspect", func(ctx context.Context) (*lockListing, error) { return m.inspect(ctx, "") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.Servers[1].Stop()
			defer c.Servers[1].Cont()
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			time.AfterFunc(300*time.Millisecond, cancel) // an operator's ^C
			t0 := time.Now()
			lst, err := tt.list(cctx)
			took := time.Since(t0)
			require.NoError(t, err, "two of three masters answered")
			assert.Less(t, took, 3*time.Second, "returned when it was cancelled")
			require.Len(t, lst.Masters, 3)
			assert.True(t, lst.Masters[0].Answered)
			assert.False(t, lst.Masters[1].Answered)
			assert.Contains(t, lst.Masters[1].Error, c.Servers[1].Name, "the error names the master")
			assert.True(t, lst.Masters[2].Answered)
		})
	}
}

// TestListingOfAMasterThatAnswersGarbage: a master that answers a listing with
// something else than Redis's protocol (an HTTP server, replies cut short or
// claiming lengths past any cap) fails the listing on that master alone, with an
// error naming it, within the per-call timeout; the others are listed.
func TestListingOfAMasterThatAnswersGarbage(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct{ name, reply string }{
		{"http", "HTTP/1.1 400 Bad Request\r\n\r\n"},
		{"array cut short", "*2\r\n$1\r\n0\r\n"},
		{"huge bulk", "*2\r\n$1\r\n0\r\n*1\r\n$999999999999\r\nx\r\n"},
		{"error", "-ERR unknown command\r\n"},
		{"a line past the buffer", "+" + strings.Repeat("x", 100<<10) + "\r\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			t.Cleanup(func() { _ = ln.Close() })
			go func() {
				for {
					conn, err := ln.Accept()
					if err != nil {
						return
					}
					go func() {
						defer func() { _ = conn.Close() }()
						buf := make([]byte, 4096)
						if _, err := conn.Read(buf); err == nil {
							_, _ = conn.Write([]byte(tt.reply))
						}
						time.Sleep(5 * time.Second)
					}()
				}
			}()
			c := redistest.Start(t, 2, redistest.Options{})
			nodes := []Node{{Name: "a", Addr: c.Servers[0].Addr()}, {Name: "liar", Addr: ln.Addr().String()}, {Name: "b", Addr: c.Servers[1].Addr()}}
			m, err := New(nodes, WithRestartQuarantine(0), WithNodeTimeout(200*time.Millisecond))
			require.NoError(t, err)
			t.Cleanup(func() { _ = m.Close() })
			require.NoError(t, c.Servers[0].Client().Set(ctx, "lock:x", "v", time.Minute).Err())
			t0 := time.Now()
			lst, err := m.inspect(ctx, "")
			require.NoError(t, err)
			assert.Less(t, time.Since(t0), 10*time.Second)
			assert.True(t, lst.Masters[0].Answered)
			assert.True(t, lst.Masters[2].Answered)
			require.False(t, lst.Masters[1].Answered)
			assert.Contains(t, lst.Masters[1].Error, "liar")
			t.Log(lst.Masters[1].Error)
		})
	}
}

// TestBugListingWaitsTwiceForAPausedMaster: a listing on a master paused since
// the last listing waited for it twice, the listing's per-call timeout on the
// idle connection and again on a new one (taken for a connection the master had
// closed), so that Inspect took 4 s where a paused master costs 2 s, and the
// console's poll ran out of time before it read the shared keys' holders.
func TestBugListingWaitsTwiceForAPausedMaster(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3) // per-call timeout: 2 s
	_, err := m.TryAcquire(ctx, "paused", time.Minute)
	require.NoError(t, err)
	require.Equal(t, 2*time.Second, m.inspectCallTimeout())
	tests := []struct {
		name string
		list func() (*lockListing, error)
	}{
		{"inspect", func() (*lockListing, error) { return m.inspect(ctx, "") }},
		{"describe", func() (*lockListing, error) { return m.describe(ctx, []string{"paused"}) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.list() // leaves an idle listing connection to every master
			require.NoError(t, err)
			c.Servers[1].Stop()
			defer c.Servers[1].Cont()
			t0 := time.Now()
			lst, err := tt.list()
			took := time.Since(t0)
			require.NoError(t, err)
			assert.False(t, lst.Masters[1].Answered)
			assert.Less(t, took, 3500*time.Millisecond, "one per-call timeout (2 s), not two")
		})
	}
}
