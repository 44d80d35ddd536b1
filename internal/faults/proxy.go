// Package faults injects faults into tests that run real Redis masters: an
// in-process TCP proxy per (client, master) on 127.0.0.1 for network faults
// (latency, blackhole, lost replies, reset, stop), process faults on top of
// internal/redistest (kill and restart, pause, DEBUG SLEEP, CLIENT PAUSE), a client
// clock with a rate error, and a server clock shift of lock TTLs.
//
// Everything stays on loopback. Faults are meant for tests only: nothing here is
// tuned for throughput.
package faults

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"
)

// TB is the part of testing.TB the harness needs.
type TB interface {
	Helper()
	Cleanup(func())
	Fatalf(format string, args ...any)
}

// Proxy forwards TCP connections from 127.0.0.1 to one upstream address and
// injects network faults into them. The zero fault state forwards everything at
// once. It is safe for concurrent use.
type Proxy struct {
	ln net.Listener

	mu       sync.Mutex
	upstream string
	up, down time.Duration // latency added to client->server and server->client data
	dropUp   bool          // client->server data is dropped (blackhole)
	dropDown bool          // server->client data is dropped (lost replies)
	stopped  bool          // new connections are reset at once
	conns    map[*pair]struct{}
	closed   bool
}

type pair struct{ client, server net.Conn }

// NewProxy starts a proxy to upstream on a free loopback port and closes it in
// t.Cleanup.
func NewProxy(t TB, upstream string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("faults: proxy listen: %v", err)
	}
	p := &Proxy{upstream: upstream, ln: ln, conns: map[*pair]struct{}{}}
	go p.serve()
	t.Cleanup(p.Close)
	return p
}

// Addr returns the proxy's listening address.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Upstream returns the address the proxy forwards new connections to.
func (p *Proxy) Upstream() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.upstream
}

// SetUpstream makes the proxy forward new connections to addr (a loopback
// address), as a virtual IP or a DNS name moved by a failover would: clients keep
// dialling the same address and reach another server. Connections already open
// stay on the old upstream until they end; Reset moves them at once.
func (p *Proxy) SetUpstream(addr string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.upstream = addr
}

// Dial connects to the proxy whatever addr says; it has the signature of
// quorum.Node.Dialer, so a client's connections to one master go through it.
func (p *Proxy) Dial(ctx context.Context, network, _ string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, network, p.Addr())
}

// SetLatency delays data in each direction by the given durations (0 = none). It
// applies to data read after the call.
func (p *Proxy) SetLatency(up, down time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.up, p.down = up, down
}

// Blackhole drops all data in both directions without closing connections, like
// toxiproxy's timeout toxic with no timeout: commands are never applied and
// nothing is answered.
func (p *Proxy) Blackhole() { p.set(true, true) }

// LoseReplies forwards commands but drops every reply: writes are applied and the
// client never learns it (ambiguous writes).
func (p *Proxy) LoseReplies() { p.set(false, true) }

// Heal removes every fault: no latency, nothing dropped, new connections accepted.
// Connections that lost data stay open; clients time them out and reconnect.
func (p *Proxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.up, p.down, p.dropUp, p.dropDown, p.stopped = 0, 0, false, false, false
}

func (p *Proxy) set(up, down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropUp, p.dropDown = up, down
}

// Reset closes every open connection with a TCP RST; new connections work.
func (p *Proxy) Reset() {
	p.mu.Lock()
	conns := p.conns
	p.conns = map[*pair]struct{}{}
	p.mu.Unlock()
	for c := range conns {
		c.reset()
	}
}

// Stop resets every connection and refuses new ones (they are reset at accept)
// until Heal.
func (p *Proxy) Stop() {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	p.Reset()
}

// Close stops the proxy for good.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	_ = p.ln.Close()
	p.Reset()
}

func (c *pair) reset() {
	for _, cn := range []net.Conn{c.client, c.server} {
		if tc, ok := cn.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		_ = cn.Close()
	}
}

func (p *Proxy) serve() {
	for {
		cl, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.handle(cl)
	}
}

func (p *Proxy) handle(cl net.Conn) {
	p.mu.Lock()
	stopped := p.stopped || p.closed
	upstream := p.upstream
	p.mu.Unlock()
	if stopped {
		(&pair{client: cl, server: cl}).reset()
		return
	}
	sv, err := net.DialTimeout("tcp", upstream, time.Second)
	if err != nil {
		(&pair{client: cl, server: cl}).reset()
		return
	}
	c := &pair{client: cl, server: sv}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		c.reset()
		return
	}
	p.conns[c] = struct{}{}
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { p.pump(cl, sv, true); done <- struct{}{} }()
	go func() { p.pump(sv, cl, false); done <- struct{}{} }()
	<-done
	_ = cl.Close()
	_ = sv.Close()
	<-done
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

type chunk struct {
	data []byte
	due  time.Time
}

// pump copies src to dst, dropping or delaying each chunk as the fault state says
// when the chunk is read. Order is kept; latency is added once per chunk, not
// accumulated.
func (p *Proxy) pump(src, dst net.Conn, upstream bool) {
	q := make(chan chunk, 4096)
	go func() {
		defer close(q)
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				p.mu.Lock()
				drop, lat := p.dropDown, p.down
				if upstream {
					drop, lat = p.dropUp, p.up
				}
				p.mu.Unlock()
				if !drop {
					q <- chunk{data: append([]byte(nil), buf[:n]...), due: time.Now().Add(lat)}
				}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range q {
		if d := time.Until(c.due); d > 0 {
			time.Sleep(d)
		}
		if _, err := dst.Write(c.data); err != nil {
			_ = src.Close()
			for range q { // drain so the reader ends
			}
			return
		}
	}
	if tc, ok := dst.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
}

// Net is a set of proxies, one per (client, master), so that each client sees its
// own network.
type Net struct {
	t       TB
	mu      sync.Mutex
	proxies map[string]map[string]*Proxy // client -> master -> proxy
}

// NewNet returns an empty set of proxies.
func NewNet(t TB) *Net { return &Net{t: t, proxies: map[string]map[string]*Proxy{}} }

// Proxy returns the proxy between client and master (at upstream), creating it
// on first use.
func (n *Net) Proxy(client, master, upstream string) *Proxy {
	n.mu.Lock()
	defer n.mu.Unlock()
	m := n.proxies[client]
	if m == nil {
		m = map[string]*Proxy{}
		n.proxies[client] = m
	}
	if p := m[master]; p != nil {
		return p
	}
	p := NewProxy(n.t, upstream)
	m[master] = p
	return p
}

// Get returns an existing proxy or an error naming the missing pair.
func (n *Net) Get(client, master string) (*Proxy, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if p := n.proxies[client][master]; p != nil {
		return p, nil
	}
	return nil, fmt.Errorf("faults: no proxy from %s to %s", client, master)
}

// Each calls fn on every proxy of client to the named masters (all when none named).
func (n *Net) Each(client string, fn func(*Proxy), masters ...string) {
	n.mu.Lock()
	var ps []*Proxy
	for name, p := range n.proxies[client] {
		if len(masters) == 0 || contains(masters, name) {
			ps = append(ps, p)
		}
	}
	n.mu.Unlock()
	for _, p := range ps {
		fn(p)
	}
}

// HealAll heals every proxy.
func (n *Net) HealAll() {
	n.mu.Lock()
	var ps []*Proxy
	for _, m := range n.proxies {
		for _, p := range m {
			ps = append(ps, p)
		}
	}
	n.mu.Unlock()
	for _, p := range ps {
		p.Heal()
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}
