package quorum

import (
	"bytes"
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// trackProxy is an in-process TCP proxy on 127.0.0.1 in front of one real
// master that lets a test tamper with what the master sends on the loss
// watch's tracking connections (those that sent CLIENT TRACKING): inject
// bytes between two of the master's writes, or pass its bytes on one at a
// time. Every other connection is forwarded as it is.
type trackProxy struct {
	ln       net.Listener
	upstream string
	split    atomic.Bool // tracking connections get the master's bytes one at a time

	mu    sync.Mutex
	pairs map[*trackPair]struct{}
}

type trackPair struct {
	client, server net.Conn
	tracking       atomic.Bool
	wmu            sync.Mutex // one write to the client at a time: the master's, or an injection
}

func newTrackProxy(t *testing.T, upstream string) *trackProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy listen: %v", err)
	}
	p := &trackProxy{ln: ln, upstream: upstream, pairs: map[*trackPair]struct{}{}}
	go p.serve()
	t.Cleanup(p.close)
	return p
}

// dial has the signature of Node.Dialer.
func (p *trackProxy) dial(ctx context.Context, network, _ string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, network, p.ln.Addr().String())
}

func (p *trackProxy) close() {
	_ = p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.pairs {
		_ = c.client.Close()
		_ = c.server.Close()
	}
}

func (p *trackProxy) serve() {
	for {
		cl, err := p.ln.Accept()
		if err != nil {
			return
		}
		sv, err := net.Dial("tcp", p.upstream)
		if err != nil {
			_ = cl.Close()
			continue
		}
		c := &trackPair{client: cl, server: sv}
		p.mu.Lock()
		p.pairs[c] = struct{}{}
		p.mu.Unlock()
		go p.up(c)
		go p.down(c)
	}
}

// up forwards the client's commands and marks a tracking connection.
func (p *trackProxy) up(c *trackPair) {
	buf := make([]byte, 32<<10)
	for {
		n, err := c.client.Read(buf)
		if n > 0 {
			if bytes.Contains(buf[:n], []byte("TRACKING")) {
				c.tracking.Store(true)
			}
			if _, werr := c.server.Write(buf[:n]); werr != nil {
				err = werr
			}
		}
		if err != nil {
			p.drop(c)
			return
		}
	}
}

// down forwards the master's replies and pushes.
func (p *trackProxy) down(c *trackPair) {
	buf := make([]byte, 32<<10)
	for {
		n, err := c.server.Read(buf)
		if n > 0 {
			c.wmu.Lock()
			var werr error
			if c.tracking.Load() && p.split.Load() {
				for i := 0; i < n && werr == nil; i++ {
					_, werr = c.client.Write(buf[i : i+1])
				}
			} else {
				_, werr = c.client.Write(buf[:n])
			}
			c.wmu.Unlock()
			if werr != nil {
				err = werr
			}
		}
		if err != nil {
			p.drop(c)
			return
		}
	}
}

func (p *trackProxy) drop(c *trackPair) {
	_ = c.client.Close()
	_ = c.server.Close()
	p.mu.Lock()
	delete(p.pairs, c)
	p.mu.Unlock()
}

// inject writes b to every open tracking connection, between two writes of
// the master, and returns how many it reached.
func (p *trackProxy) inject(b []byte) int {
	p.mu.Lock()
	var ps []*trackPair
	for c := range p.pairs {
		if c.tracking.Load() {
			ps = append(ps, c)
		}
	}
	p.mu.Unlock()
	for _, c := range ps {
		c.wmu.Lock()
		_, _ = c.client.Write(b)
		c.wmu.Unlock()
	}
	return len(ps)
}
