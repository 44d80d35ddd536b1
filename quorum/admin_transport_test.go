package quorum

import (
	"context"
	"testing"
	"time"

	"github.com/redlock/redlock/internal/keyspace"
	"github.com/redlock/redlock/internal/wire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAdminActionsGoThroughTheTransport: an administrator's force-expire (with
// and without a token, of a plain lock and of a shared holder), revocation and
// a permit's loss announcement are sent through the Manager's transport, to one
// master per command, and do what they say on every master.
func TestAdminActionsGoThroughTheTransport(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3)
	sent := recordSent(m)
	onAll := func(t *testing.T, key string, want bool) {
		t.Helper()
		for i, s := range c.Servers {
			n, err := s.Client().Exists(ctx, key).Result()
			require.NoError(t, err)
			assert.Equal(t, want, n == 1, "master %d: key %s there", i, key)
		}
	}
	sentTo := func(match func(*wire.Cmd) bool) int {
		cmds := sent.matching(match)
		for _, c := range cmds {
			n := 0
			for _, yes := range c.Only {
				if yes {
					n++
				}
			}
			assert.Equal(t, 1, n, "one master per command: %v", c.Only)
		}
		return len(cmds)
	}

	tests := []struct {
		name string
		act  func(t *testing.T) (key string, want []func(*wire.Cmd) bool)
	}{
		{"force-expire of a plain lock by token", func(t *testing.T) (string, []func(*wire.Cmd) bool) {
			l, err := m.TryAcquire(ctx, "adm-plain", time.Minute)
			require.NoError(t, err)
			rep, err := m.forceExpire(ctx, "adm-plain", l.Token())
			require.NoError(t, err)
			assert.Equal(t, 3, rep.Votes)
			return l.Key(), []func(*wire.Cmd) bool{ofScript(forceExpireW)}
		}},
		{"force-expire of a shared holder by token", func(t *testing.T) (string, []func(*wire.Cmd) bool) {
			s, err := m.Shared("adm-shared")
			require.NoError(t, err)
			l, err := s.TryAcquire(ctx, time.Minute)
			require.NoError(t, err)
			rep, err := m.forceExpire(ctx, "adm-shared", l.Token())
			require.NoError(t, err)
			assert.Equal(t, 3, rep.Votes)
			return l.Key(), []func(*wire.Cmd) bool{ofScript(forceExpireW), ofCommand("ZSCORE"), ofScript(sharedReleaseScript), ofCommand("PUBLISH")}
		}},
		{"force-expire without a token", func(t *testing.T) (string, []func(*wire.Cmd) bool) {
			l, err := m.TryAcquire(ctx, "adm-any", time.Minute)
			require.NoError(t, err)
			rep, err := m.forceExpire(ctx, "adm-any", "")
			require.NoError(t, err)
			assert.Equal(t, 3, rep.Votes)
			return l.Key(), []func(*wire.Cmd) bool{ofScript(deleteAnnounceW)}
		}},
		{"revocation by token", func(t *testing.T) (string, []func(*wire.Cmd) bool) {
			l, err := m.TryAcquire(ctx, "adm-revoke", time.Minute)
			require.NoError(t, err)
			_, rep, err := m.revokeToken(ctx, "adm-revoke", l.Token())
			require.NoError(t, err)
			assert.Equal(t, 3, rep.Votes)
			for _, s := range c.Servers {
				v, err := s.Client().Get(ctx, l.Key()).Result()
				require.NoError(t, err)
				assert.Equal(t, keyspace.Tombstone(l.Token()), v, "the tombstone is in its place")
			}
			require.NoError(t, l.Release(ctx), "the holder's release frees the name")
			return l.Key(), []func(*wire.Cmd) bool{ofScript(revokeW)}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sent.mu.Lock()
			sent.cmds = nil
			sent.mu.Unlock()
			key, want := tt.act(t)
			onAll(t, key, false)
			for _, w := range want {
				assert.Positive(t, sentTo(w), "sent through the transport")
			}
		})
	}
}

// TestBugForceExpireWaitsOutAPausedMaster: a force-expire cancelled while a
// master is paused returns when it is cancelled, with the others done, not at
// the end of the node timeout (its go-redis calls heeded a context's deadline
// but not its cancellation).
func TestBugForceExpireWaitsOutAPausedMaster(t *testing.T) {
	ctx := context.Background()
	c, m := testCluster(t, 3, WithNodeTimeout(4*time.Second))
	for _, token := range []string{"", "token"} {
		t.Run("token "+token, func(t *testing.T) {
			l, err := m.TryAcquire(ctx, "adm-paused", time.Minute)
			require.NoError(t, err)
			if token != "" {
				token = l.Token()
			}
			c.Servers[1].Stop()
			defer c.Servers[1].Cont()
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			time.AfterFunc(300*time.Millisecond, cancel) // an operator's ^C
			t0 := time.Now()
			rep, err := m.forceExpire(cctx, "adm-paused", token)
			took := time.Since(t0)
			require.ErrorIs(t, err, ErrPartialRelease)
			assert.Less(t, took, 2*time.Second, "returned when it was cancelled")
			require.Len(t, rep.Nodes, 3)
			assert.Equal(t, OutcomeOK, rep.Nodes[0].Outcome)
			assert.Equal(t, OutcomeError, rep.Nodes[1].Outcome)
			assert.Equal(t, OutcomeOK, rep.Nodes[2].Outcome)
			for _, i := range []int{0, 2} {
				n, err := c.Servers[i].Client().Exists(ctx, l.Key()).Result()
				require.NoError(t, err)
				assert.Zero(t, n, "deleted on master %d", i)
			}
		})
	}
}
