package quorum

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// lossKinds takes each kind of hold on m, returning the lock and the key to
// remove to take it away (a multi-name lock loses one of its names).
var lossKinds = []struct {
	name string
	take func(t *testing.T, m *Manager) (*Lock, string)
}{
	{"mutex", func(t *testing.T, m *Manager) (*Lock, string) {
		l, err := m.Acquire(context.Background(), "mx", 30*time.Second, WithLossWatch())
		require.NoError(t, err)
		return l, l.Key()
	}},
	{"permit", func(t *testing.T, m *Manager) (*Lock, string) {
		l, err := m.Acquire(context.Background(), "sem", 30*time.Second, withPermits(2), WithLossWatch())
		require.NoError(t, err)
		return l, l.Key()
	}},
	{"shared", func(t *testing.T, m *Manager) (*Lock, string) {
		l, err := m.Acquire(context.Background(), "rw", 30*time.Second, withShared(), WithLossWatch())
		require.NoError(t, err)
		return l, l.Key()
	}},
	{"multi", func(t *testing.T, m *Manager) (*Lock, string) {
		l, err := m.takeMulti(context.Background(), []string{"a", "b"}, 30*time.Second, WithLossWatch())
		require.NoError(t, err)
		return l, m.Key("b")
	}},
	{"leadership", func(t *testing.T, m *Manager) (*Lock, string) {
		e, err := m.Election("lead")
		require.NoError(t, err)
		ld, err := e.Campaign(context.Background(), "me", 30*time.Second) // a keep-alive: watched by default
		require.NoError(t, err)
		return ld.Lock, e.Key()
	}},
}

// lossCauses take key away on a quorum of c's masters (3 of 5).
var lossCauses = []struct {
	name   string
	remove func(t *testing.T, c *redistest.Cluster, admin *Manager, key string)
}{
	{"del", func(t *testing.T, c *redistest.Cluster, _ *Manager, key string) {
		for _, s := range c.Servers[:3] {
			require.NoError(t, s.Client().Del(context.Background(), key).Err())
		}
	}},
	{"set", func(t *testing.T, c *redistest.Cluster, _ *Manager, key string) {
		for _, s := range c.Servers[:3] {
			require.NoError(t, s.Client().Set(context.Background(), key, "rl1.other.someone", 0).Err())
		}
	}},
	{"flushall", func(t *testing.T, c *redistest.Cluster, _ *Manager, _ string) {
		for _, s := range c.Servers[:3] {
			require.NoError(t, s.Client().FlushAll(context.Background()).Err())
		}
	}},
	{"restart-empty", func(t *testing.T, c *redistest.Cluster, _ *Manager, _ string) {
		for _, s := range c.Servers[:3] {
			s.Restart(false)
		}
	}},
	{"force-expire", func(t *testing.T, _ *redistest.Cluster, admin *Manager, key string) {
		_, err := admin.forceExpire(context.Background(), strings.TrimPrefix(key, "lock:"), "")
		require.NoError(t, err)
	}},
}

// armed waits until m's loss watch has read every key of l on every master that
// voted for it and seen it held there.
func armed(t *testing.T, m *Manager, l *Lock) {
	t.Helper()
	require.Eventually(t, func() bool {
		w := m.losses()
		if w == nil { // no watch: the lock was not watched, or the Manager closed
			return false
		}
		for _, tr := range w.trackers {
			tr.mu.Lock()
			var lw *lossWatch
			for _, x := range tr.keys[l.watchKeys()[0]] {
				if x.l == l {
					lw = x
				}
			}
			tr.mu.Unlock()
			if lw == nil {
				return false
			}
			lw.mu.Lock()
			held := true
			for i, st := range lw.st {
				// A master the acquisition did not await (its round ended at
				// its quorum) may not hold the key: the lock does not count on it.
				if st != stHeld && lw.voted(i/len(lw.keys)) {
					held = false
				}
			}
			lw.mu.Unlock()
			if !held {
				return false
			}
		}
		return true
	}, 5*time.Second, 5*time.Millisecond, "the loss watch never read %s everywhere", l.Name())
}

// TestBugLossFromAnyCauseIsHeard: a holder heard of its loss only through this
// tool's own release notification, its next extension or Until; a DEL, a SET of
// another value, FLUSHALL or a master restarted empty on a quorum went unheard
// for the whole TTL (30 s here). Every kind of hold must now see Done, with an
// error matching ErrLost, within a few round trips.
func TestBugLossFromAnyCauseIsHeard(t *testing.T) {
	for _, k := range lossKinds {
		for _, cause := range lossCauses {
			t.Run(k.name+"/"+cause.name, func(t *testing.T) {
				c, m := testCluster(t, 5)
				admin := managerFor(t, c)
				l, key := k.take(t, m)
				armed(t, m, l)
				require.NoError(t, l.Err())
				at := time.Now()
				cause.remove(t, c, admin, key)
				select {
				case <-l.Done():
					t.Logf("Done %v after the removal ended", time.Since(at))
					require.ErrorIs(t, l.Err(), ErrLost)
				case <-time.After(5 * time.Second):
					t.Fatalf("the holder did not hear within 5s that its %s was taken away (%s)", k.name, cause.name)
				}
				require.ErrorIs(t, l.Verify(context.Background()), ErrLost, "the quorum really lost it")
			})
		}
	}
}

// TestLossWatchWithoutTracking: a master that refuses CLIENT TRACKING (an ACL
// here) or does not know it (miniredis, the embedded demo's server) is read
// again every trackPoll: a loss is then heard within about that long.
func TestLossWatchWithoutTracking(t *testing.T) {
	tests := []struct {
		name    string
		masters func(t *testing.T) (m *Manager, del func(key string))
	}{
		{"acl refuses client tracking", func(t *testing.T) (*Manager, func(string)) {
			c, m := testCluster(t, 5)
			for _, s := range c.Servers {
				require.NoError(t, s.Client().Do(context.Background(), "ACL", "SETUSER", "default", "-client|tracking").Err())
			}
			return m, func(key string) {
				for _, s := range c.Servers[:3] {
					require.NoError(t, s.Client().Del(context.Background(), key).Err())
				}
			}
		}},
		{"miniredis", func(t *testing.T) (*Manager, func(string)) {
			var nodes []Node
			var srvs []*miniredis.Miniredis
			for i := range 5 {
				s := miniredis.RunT(t)
				srvs = append(srvs, s)
				nodes = append(nodes, Node{Name: fmt.Sprintf("m%d", i), Addr: s.Addr()})
			}
			m, err := New(nodes, WithRestartQuarantine(0), WithNodeTimeout(200*time.Millisecond))
			require.NoError(t, err)
			t.Cleanup(func() { _ = m.Close() })
			return m, func(key string) {
				for _, s := range srvs[:3] {
					s.Del(key)
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, del := tt.masters(t)
			l, err := m.Acquire(context.Background(), "mx", 30*time.Second, WithLossWatch())
			require.NoError(t, err)
			time.Sleep(100 * time.Millisecond)
			for _, tr := range m.losses().trackers {
				require.False(t, tr.tracking.Load(), "%s tracks", tr.n.name)
			}
			at := time.Now()
			del(l.Key())
			select {
			case <-l.Done():
				t.Logf("Done %v after the removal", time.Since(at))
				require.ErrorIs(t, l.Err(), ErrLost)
			case <-time.After(trackPoll + 3*time.Second):
				t.Fatalf("no loss heard within %v without tracking", trackPoll+3*time.Second)
			}
		})
	}
}
