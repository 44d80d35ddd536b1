package quorum

import (
	"bytes"
	"context"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// Targeted, deterministic attacks on the pipelined wire path (wire*.go).

// splitConn is a custom Dialer's connection to a real master that, once armed,
// delivers the next reply only up to its first line: the rest is held until the
// test opens the gate. It forwards the master's bytes unchanged and in order; it
// only chooses when they arrive, as a slow network may.
type splitConn struct {
	net.Conn
	mu      sync.Mutex
	armed   bool
	stash   []byte
	tickets int           // reads that waited at the gate
	taken   chan struct{} // closed once the stash was read
	gate    chan struct{} // closed: the stash may be read (by the latest waiter)
	blocked chan struct{} // closed when a read waits at the gate
	once    sync.Once
}

func newSplitConn(c net.Conn) *splitConn {
	return &splitConn{Conn: c, gate: make(chan struct{}), blocked: make(chan struct{}), taken: make(chan struct{})}
}

func (s *splitConn) arm() {
	s.mu.Lock()
	s.armed = true
	s.mu.Unlock()
}

// Read hands the held rest of a reply to the read that reached the gate last
// (two goroutines reading one connection get its bytes in no particular order);
// an earlier one reads on a little later.
func (s *splitConn) Read(p []byte) (int, error) {
	s.mu.Lock()
	if len(s.stash) > 0 {
		s.tickets++
		me := s.tickets
		s.mu.Unlock()
		s.once.Do(func() { close(s.blocked) })
		<-s.gate
		time.Sleep(time.Millisecond) // every waiter has its ticket
		s.mu.Lock()
		if me == s.tickets && len(s.stash) > 0 {
			n := copy(p, s.stash)
			s.stash = s.stash[n:]
			if len(s.stash) == 0 {
				close(s.taken)
			}
			s.mu.Unlock()
			return n, nil
		}
		s.mu.Unlock()
		<-s.taken
		time.Sleep(50 * time.Millisecond)
	} else {
		s.mu.Unlock()
	}
	n, err := s.Conn.Read(p)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.armed && n > 0 {
		if i := bytes.Index(p[:n], []byte("\r\n")); i >= 0 && i+2 < n {
			s.stash = append(s.stash, p[i+2:n]...)
			n = i + 2
			s.armed = false
		}
	}
	return n, err
}

// A reader gives up the reader's role of a connection only once it has read the
// whole reply: a SET NX GET that found the key held answers "$<len>" and then the
// holder's value, and the value is read after the command was taken off the
// connection. Until then the connection is not idle: a round that writes on it
// must not become a second reader of the same bufio.Reader (a data race, and a
// reply read from the middle of another's: the first line of a reply is a slice
// of the reader's buffer, decoded after the role was given up).
func TestAttackPipeReaderRoleHeldUntilReplyConsumed(t *testing.T) {
	// "$-1" is any value at all to the master; read as a reply line it is the
	// "key set" answer of SET NX GET: a vote that was never given.
	for _, holder := range []string{"rl1.holder", "$-1"} {
		t.Run(holder, func(t *testing.T) { attackReaderRole(t, holder) })
	}
}

func attackReaderRole(t *testing.T, holder string) {
	sv := redistest.StartOne(t, "a", redistest.Options{})
	var conns []*splitConn
	var mu sync.Mutex
	node := Node{Name: "a", Addr: sv.Addr(), Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		sc := newSplitConn(c)
		mu.Lock()
		conns = append(conns, sc)
		mu.Unlock()
		return sc, nil
	}}
	st := newConnStats()
	m, err := New([]Node{node}, WithRestartQuarantine(0), WithNodeTimeout(2*time.Second), WithObserver(st))
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	ctx := context.Background()
	require.Equal(t, 1, m.wireRound(ctx, opAcquire, "lock:warm", wireSet, "rl1.warm", "", 60000).Votes)
	require.NoError(t, sv.Client().Set(ctx, "lock:held", holder, time.Minute).Err())
	require.NoError(t, sv.Client().Set(ctx, "lock:other", "rl1.other", time.Minute).Err())
	mu.Lock()
	require.Len(t, conns, 1)
	sc := conns[0]
	mu.Unlock()

	sc.arm()
	first := make(chan *Report, 1)
	go func() { first <- m.wireRound(ctx, opAcquire, "lock:held", wireSet, "rl1.first", "", 60000) }()
	select {
	case <-sc.blocked: // the first round read "$<len>" and waits for the value
	case <-time.After(2 * time.Second):
		t.Fatal("the first round never read its reply")
	}
	second := make(chan *Report, 1)
	go func() { second <- m.wireRound(ctx, opAcquire, "lock:other", wireSet, "rl1.second", "", 60000) }()
	time.Sleep(20 * time.Millisecond) // the second SET is written (and, wrongly, read) now
	close(sc.gate)
	r1, r2 := <-first, <-second
	assert.Equal(t, []Outcome{OutcomeForeign}, outcomes(r1), "%v", r1.Nodes[0].Err)
	assert.Equal(t, holder, r1.Nodes[0].holder)
	assert.Equal(t, []Outcome{OutcomeForeign}, outcomes(r2), "%v", r2.Nodes[0].Err)
	assert.Equal(t, "rl1.other", r2.Nodes[0].holder)
	assert.Zero(t, r2.Votes, "a vote counted on a key held by another owner")
	assert.Equal(t, "rl1.other", sv.Client().Get(ctx, "lock:other").Val())
	assert.Zero(t, st.Dropped(""), "the connection stayed in step")
}

// slowBodyConn is a custom Dialer's connection to a real master that, once armed,
// delivers the next reply's first line at once and the rest of it `delay` later,
// as a network does when the rest of a reply is in a segment that was lost and
// sent again. Reads honour the read deadline, like a net.Conn's.
type slowBodyConn struct {
	net.Conn
	delay time.Duration

	mu       sync.Mutex
	armed    bool
	stash    []byte
	at       time.Time // when the stash may be read
	deadline time.Time
}

func (s *slowBodyConn) arm() {
	s.mu.Lock()
	s.armed = true
	s.mu.Unlock()
}

func (s *slowBodyConn) SetReadDeadline(t time.Time) error {
	s.mu.Lock()
	s.deadline = t
	s.mu.Unlock()
	return s.Conn.SetReadDeadline(t)
}

func (s *slowBodyConn) SetDeadline(t time.Time) error {
	s.mu.Lock()
	s.deadline = t
	s.mu.Unlock()
	return s.Conn.SetDeadline(t)
}

func (s *slowBodyConn) Read(p []byte) (int, error) {
	for {
		s.mu.Lock()
		if len(s.stash) == 0 {
			break
		}
		now, at, dl := time.Now(), s.at, s.deadline
		if !now.Before(at) {
			n := copy(p, s.stash)
			s.stash = s.stash[n:]
			s.mu.Unlock()
			return n, nil
		}
		s.mu.Unlock()
		wait := at.Sub(now)
		if !dl.IsZero() {
			if !now.Before(dl) {
				return 0, os.ErrDeadlineExceeded
			}
			wait = min(wait, dl.Sub(now))
		}
		time.Sleep(wait)
	}
	s.mu.Unlock()
	n, err := s.Conn.Read(p)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.armed && n > 0 {
		if i := bytes.Index(p[:n], []byte("\r\n")); i >= 0 && i+2 < n {
			s.stash = append(s.stash, p[i+2:n]...)
			s.at = time.Now().Add(s.delay)
			n = i + 2
			s.armed = false
		}
	}
	return n, err
}

// A SET NX GET reply whose first line ("$<len>") is in but whose value is late
// past the reader's deadline (a round waits wirePatience for its own reply; a
// cancellation sets the deadline to now): the read fails on the deadline after
// the first line was consumed. It must not be taken for "nothing read yet": the
// next read would start in the middle of the reply and take the holder's value
// for a reply. With the value "$-1" the round counts a vote on a key another
// owner holds; with an ordinary value the connection is dropped for a protocol
// error it did not have.
func TestAttackPipeBodyLateAfterDeadlineKeepsStep(t *testing.T) {
	for _, holder := range []string{"rl1.holder", "$-1"} {
		t.Run(holder, func(t *testing.T) {
			sv := redistest.StartOne(t, "a", redistest.Options{})
			var sc *slowBodyConn
			node := Node{Name: "a", Addr: sv.Addr(), Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
				var d net.Dialer
				c, err := d.DialContext(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				sc = &slowBodyConn{Conn: c, delay: 20 * time.Millisecond}
				return sc, nil
			}}
			st := newConnStats()
			m, err := New([]Node{node}, WithRestartQuarantine(0), WithNodeTimeout(time.Second), WithObserver(st))
			require.NoError(t, err)
			t.Cleanup(func() { _ = m.Close() })
			ctx := context.Background()
			require.Equal(t, 1, m.wireRound(ctx, opAcquire, "lock:warm", wireSet, "rl1.warm", "", 60000).Votes)
			require.NoError(t, sv.Client().Set(ctx, "lock:held", holder, time.Minute).Err())
			sc.arm()
			rep := m.wireRound(ctx, opAcquire, "lock:held", wireSet, "rl1.mine", "", 60000)
			assert.Zero(t, rep.Votes, "a vote counted on a key held by %q", holder)
			assert.Equal(t, []Outcome{OutcomeForeign}, outcomes(rep), "%v", rep.Nodes[0].Err)
			assert.Equal(t, holder, rep.Nodes[0].holder)
			assert.Equal(t, holder, sv.Client().Get(ctx, "lock:held").Val())
			assert.Zero(t, st.Dropped(""), "the connection stayed in step")
		})
	}
}
