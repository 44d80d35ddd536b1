package quorum

import (
	"bufio"
	"context"
	"errors"
	"net"
	"runtime"
	"sync"
	"time"
)

// Connection sets of the wire fast path: one raw connection per master, taken by
// one round at a time and dropped after any failure.

// wireConn is one raw connection to one master.
type wireConn struct {
	c    net.Conn
	rd   *bufio.Reader
	used time.Time // start of the last round it answered
	// setGet: the master takes SET NX GET (Redis >= 7), which tells whose value
	// holds the key when the SET fails. Learned from INFO server at the handshake.
	setGet bool
	probe  // the idle check's state (wire_unix.go)
}

// connSet is one connection per master, used by one round at a time.
type connSet struct {
	conns []*wireConn // by node index; nil when not connected
	buf   []byte      // the round's command, reused
	bufGt []byte      // the round's SET NX GET, for masters that take it
	wg    sync.WaitGroup
}

// wirePool hands out connection sets, creating them on demand up to max.
type wirePool struct {
	free   chan *connSet
	mu     sync.Mutex
	made   int
	closed bool
}

// wireMaxSets bounds the connection sets of one Manager, as go-redis's default pool
// size bounds its connections per master.
func wireMaxSets() int { return max(8, 10*runtime.GOMAXPROCS(0)) }

// take returns a free set, a new one while under the bound, or waits for one.
func (p *wirePool) take(ctx context.Context, n int) (*connSet, error) {
	select {
	case s := <-p.free:
		return s, nil
	default:
	}
	p.mu.Lock()
	switch {
	case p.closed:
		p.mu.Unlock()
		return nil, errors.New("manager closed")
	case p.made < cap(p.free):
		p.made++
		p.mu.Unlock()
		return &connSet{conns: make([]*wireConn, n)}, nil
	}
	p.mu.Unlock()
	select {
	case s := <-p.free:
		return s, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// put gives a set back; after close its connections are closed instead.
func (p *wirePool) put(s *connSet) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		s.close()
		return
	}
	p.free <- s // never blocks: at most cap(free) sets exist
}

// close closes the free sets' connections; sets in use are closed when put back.
func (p *wirePool) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	for {
		select {
		case s := <-p.free:
			s.close()
		default:
			return
		}
	}
}

func (s *connSet) close() {
	for i, wc := range s.conns {
		if wc != nil {
			_ = wc.c.Close()
			s.conns[i] = nil
		}
	}
}
