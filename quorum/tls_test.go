package quorum

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// tlsNodes returns the nodes of a TLS cluster with the configuration cfg gives each.
func tlsNodes(c *redistest.Cluster, cfg func(s *redistest.Server) *tls.Config) []Node {
	nodes := make([]Node, len(c.Servers))
	for i, s := range c.Servers {
		nodes[i] = Node{Name: s.Name, Addr: s.Addr(), TLS: cfg(s)}
	}
	return nodes
}

func tlsManager(t *testing.T, nodes []Node, opts ...Option) *Manager {
	t.Helper()
	base := []Option{WithRestartQuarantine(0), WithNodeTimeout(300 * time.Millisecond), WithRetry(2, 20*time.Millisecond, 10*time.Millisecond)}
	m, err := New(nodes, append(base, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	if goRedisAsked(opts) {
		useGoRedis(m)
	}
	return m
}

// Lock traffic over TLS, on the fast path and through go-redis: the CA from the
// topology, the server name given or derived from the address, with and without
// a custom Dialer and the quarantine's INFO handshake.
func TestTLSAcquireExtendRelease(t *testing.T) {
	c := redistest.Start(t, 3, redistest.Options{TLS: true})
	withName := func(s *redistest.Server) *tls.Config { return s.TLSConfig() }
	// 127.0.0.1 is in the certificate: the name taken from the address verifies.
	noName := func(s *redistest.Server) *tls.Config {
		cfg := s.TLSConfig()
		cfg.ServerName = ""
		return cfg
	}
	viaDialer := func(nodes []Node) []Node {
		for i := range nodes {
			nodes[i].Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, network, addr)
			}
		}
		return nodes
	}
	tests := []struct {
		name       string
		nodes      []Node
		hot        []Option
		opts       []Option
		quarantine bool
	}{
		{name: "fast path", nodes: tlsNodes(c, withName)},
		{name: "go-redis", nodes: tlsNodes(c, withName), hot: []Option{withGoRedisHot()}},
		{name: "fast path, server name from the address", nodes: tlsNodes(c, noName)},
		{name: "go-redis, server name from the address", nodes: tlsNodes(c, noName), hot: []Option{withGoRedisHot()}},
		{name: "fast path, custom dialer", nodes: viaDialer(tlsNodes(c, withName))},
		{name: "go-redis, custom dialer", nodes: viaDialer(tlsNodes(c, withName)), hot: []Option{withGoRedisHot()}},
		{name: "fast path, restart quarantine handshake", nodes: tlsNodes(c, withName), opts: []Option{WithRestartQuarantine(time.Millisecond)}, quarantine: true},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := tlsManager(t, tt.nodes, append(tt.hot, tt.opts...)...)
			name := "tls/" + strings.ReplaceAll(tt.name, " ", "-")
			if tt.quarantine {
				// Every connection reads INFO server before it may vote; on masters
				// younger than a second that starts a short quarantine. Meet every
				// master over TLS, then wait the quarantine out.
				require.Eventually(t, func() bool {
					if wl, err := m.TryAcquire(ctx, name+"-warm-up", time.Second); err == nil {
						_ = wl.Release(ctx)
					} else if !errors.Is(err, ErrQuarantined) && !errors.Is(err, ErrUnavailable) {
						t.Fatalf("warm-up: %v", err)
					}
					return m.metEvery() && len(m.quarantineEnds()) == 0
				}, 5*time.Second, 50*time.Millisecond, "the TLS handshake read INFO on every master")
			}
			l, err := m.Acquire(ctx, name, 10*time.Second)
			require.NoError(t, err)
			rep := l.Votes()
			assert.Equal(t, []Outcome{OutcomeOK, OutcomeOK, OutcomeOK}, outcomes(&rep))
			for _, s := range c.Servers {
				v, err := s.Client().Get(ctx, m.Key(name)).Result()
				require.NoError(t, err, "master %s", s.Name)
				assert.Equal(t, l.Token(), v, "master %s", s.Name)
			}

			// A second owner is refused over the same connections.
			_, err = m.TryAcquire(ctx, name, 10*time.Second)
			require.ErrorIs(t, err, ErrHeld)

			before := l.Until()
			require.NoError(t, l.Extend(ctx, 20*time.Second))
			assert.True(t, l.Until().After(before), "extend moves Until")
			for _, s := range c.Servers {
				pttl := s.Client().PTTL(ctx, m.Key(name)).Val()
				assert.Greater(t, pttl, 10*time.Second, "master %s holds the extended TTL", s.Name)
			}

			// The go-redis side (listings) shares the TLS configuration.
			lst, err := m.inspect(ctx, name)
			require.NoError(t, err)
			assert.Equal(t, 3, lst.Answered())
			require.NotNil(t, lst.Lock(name))
			assert.Equal(t, stateHeld, lst.Lock(name).State)

			require.NoError(t, l.Release(ctx))
			assert.Empty(t, keysOn(t, c, m.Key(name)), "nothing left after release")
		})
	}
}

// A client that does not trust the servers' CA gets a clear error per master,
// naming it, and leaves nothing locked.
func TestTLSWrongCA(t *testing.T) {
	c := redistest.Start(t, 3, redistest.Options{TLS: true})
	other, err := redistest.NewTLSFiles(t.TempDir())
	require.NoError(t, err)
	wrong, err := other.ClientConfig()
	require.NoError(t, err)
	nodes := tlsNodes(c, func(*redistest.Server) *tls.Config { return wrong.Clone() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, tt := range []struct {
		name string
		opts []Option
	}{
		{name: "fast path"},
		{name: "go-redis", opts: []Option{withGoRedisHot()}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := tlsManager(t, nodes, tt.opts...)
			_, err := m.Acquire(ctx, "tls/wrong-ca", 10*time.Second)
			require.ErrorIs(t, err, ErrNotAcquired)
			require.ErrorIs(t, err, ErrUnavailable)
			assert.NotErrorIs(t, err, ErrHeld)
			for _, s := range c.Servers {
				assert.Regexp(t, `\b`+s.Name+` \((tls handshake: )?tls: failed to verify certificate`, err.Error(), "the error names master %s", s.Name)
			}

			var re *RoundError
			require.ErrorAs(t, err, &re)
			for i, n := range re.Report.Nodes {
				assert.Equal(t, c.Servers[i].Name, n.Node)
				assert.Equal(t, OutcomeError, n.Outcome)
				var ue x509.UnknownAuthorityError
				assert.ErrorAs(t, n.Err, &ue, "master %s", n.Node)
				assert.Contains(t, n.Err.Error(), "tls: failed to verify certificate", "master %s", n.Node)
			}
			for _, s := range c.Servers {
				assert.Empty(t, s.Keys(ctx), "master %s", s.Name)
			}
		})
	}
}

// silentListener accepts connections and never answers: a TLS handshake on it
// can only end by the client's deadline.
func silentListener(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	go func() {
		for {
			cn, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, cn)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, cn := range conns {
			_ = cn.Close()
		}
	})
	return l.Addr().String()
}

// A master that accepts TCP but never completes the TLS handshake costs one node
// timeout, not more, and is reported by name; the other two still grant the lock.
func TestTLSHandshakeBoundedByNodeTimeout(t *testing.T) {
	c := redistest.Start(t, 2, redistest.Options{TLS: true})
	cfg := c.Servers[0].TLSConfig()
	nodes := []Node{
		{Name: "a", Addr: c.Servers[0].Addr(), TLS: cfg},
		{Name: "b", Addr: c.Servers[1].Addr(), TLS: cfg},
		{Name: "silent", Addr: silentListener(t), TLS: cfg},
	}
	withDialer := make([]Node, len(nodes))
	copy(withDialer, nodes)
	for i := range withDialer {
		withDialer[i].Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		}
	}
	ctx := context.Background()
	for _, tt := range []struct {
		name  string
		nodes []Node
		opts  []Option
	}{
		{name: "fast path", nodes: nodes},
		{name: "go-redis", nodes: nodes, opts: []Option{withGoRedisHot()}},
		{name: "fast path, custom dialer", nodes: withDialer},
		{name: "go-redis, custom dialer", nodes: withDialer, opts: []Option{withGoRedisHot()}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := tlsManager(t, tt.nodes, append(tt.opts, WithNodeTimeout(200*time.Millisecond))...)
			start := time.Now()
			l, err := m.TryAcquire(ctx, "tls/silent", 10*time.Second)
			took := time.Since(start)
			require.NoError(t, err)
			rep := l.Votes()
			assert.Equal(t, []Outcome{OutcomeOK, OutcomeOK, OutcomeError}, outcomes(&rep))
			assert.Equal(t, "silent", rep.Nodes[2].Node)
			var ne net.Error
			require.ErrorAs(t, rep.Nodes[2].Err, &ne)
			assert.True(t, ne.Timeout(), "a timeout: %v", rep.Nodes[2].Err)
			// Generous: one node timeout is 200ms; an unbounded handshake never returns.
			assert.Less(t, took, 2*time.Second)
			require.ErrorIs(t, l.Release(ctx), ErrPartialRelease)
			for _, s := range c.Servers {
				assert.Empty(t, s.Keys(ctx), "master %s", s.Name)
			}
		})
	}
}

// A TLS connection the master closed while idle (here by a restart) is noticed
// before the round and dialled again, as a plain one is: the master keeps its vote.
func TestTLSIdleConnectionClosedIsRedialled(t *testing.T) {
	c := redistest.Start(t, 3, redistest.Options{TLS: true})
	m := tlsManager(t, tlsNodes(c, func(s *redistest.Server) *tls.Config { return s.TLSConfig() }))
	ctx := context.Background()
	for _, tt := range []struct {
		name   string
		before func(t *testing.T) // both with and without a round's reply read first
	}{
		{name: "after a round"},
		{name: "after several rounds", before: func(t *testing.T) {
			for range 3 {
				l, err := m.TryAcquire(ctx, "tls/idle-warm", time.Second)
				require.NoError(t, err)
				require.NoError(t, l.Release(ctx))
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l, err := m.TryAcquire(ctx, "tls/idle", time.Second)
			require.NoError(t, err)
			require.NoError(t, l.Release(ctx))
			if tt.before != nil {
				tt.before(t)
			}
			c.Servers[0].Restart(false)
			time.Sleep(20 * time.Millisecond) // the pipe's reader sees the close
			// b holds the name for someone else, so that the round needs a's vote
			// (a round that a quorum granted does not wait long for a master it
			// reads nothing from, such as one whose new connection's handshake is
			// under way).
			require.NoError(t, c.Servers[1].Client().Set(ctx, "lock:tls/idle", "rl1.other", time.Second).Err())
			l, err = m.TryAcquire(ctx, "tls/idle", time.Second)
			require.NoError(t, err)
			rep := l.Votes()
			assert.Equal(t, []Outcome{OutcomeOK, OutcomeForeign, OutcomeOK}, outcomes(&rep), "a: %v", rep.Nodes[0].Err)
			require.NoError(t, l.Release(ctx))
			require.NoError(t, c.Servers[1].Client().Del(ctx, "lock:tls/idle").Err())
		})
	}
}
