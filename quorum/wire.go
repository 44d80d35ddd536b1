package quorum

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The wire fast path runs the hot commands (acquire's SET NX PX, release's and
// extend's scripts) as one hand-multiplexed round: one write to every master's
// socket, then the replies read in declared order, on raw RESP2 connections of the
// Manager's own. Everything else goes through go-redis.
//
// Connections come in sets (one connection per master); a round takes a whole set
// and gives it back, so concurrent rounds never share a connection. A connection
// that failed or timed out is closed and dropped: a late reply must never be read
// by the next round. A missing connection is dialled within the round's deadline,
// with the same handshake as go-redis's (AUTH, SELECT, TLS, and INFO server for the
// restart quarantine), in parallel with the round on the other masters.

// wireCmd is one hot command.
type wireCmd uint8

const (
	wireSet     wireCmd = iota // SET key value NX PX ms, or SET key value NX GET PX ms
	wireRelease                // EVALSHA release.lua 1 key value channel
	wireExtend                 // EVALSHA extend.lua 1 key value ms
)

// wireGrace is how long a reply already received is given to be read once the
// round's deadline has passed.
const wireGrace = 2 * time.Millisecond

// wireFresh is how recently a connection must have answered to skip the idle check.
const wireFresh = 10 * time.Millisecond

// errProtocol is a reply the fast path did not expect; the connection is dropped.
var errProtocol = errors.New("unexpected reply")

// replyError is an error reply of a master ("WRONGTYPE ...", "NOPERM ...").
type replyError string

func (e replyError) Error() string { return string(e) }

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

// withGoRedisHot sends the hot commands through go-redis instead of the fast path.
// Tests only.
func withGoRedisHot() Option { return func(c *config) { c.goRedisHot = true } }

// wireMaxSets bounds the connection sets of one Manager, as go-redis's default pool
// size bounds its connections per master.
func wireMaxSets() int { return max(8, 10*runtime.GOMAXPROCS(0)) }

// fast tells whether the hot commands take the wire fast path. The go-redis path
// stays for the defaultClientOptions mutant, which is about go-redis's options.
func (m *Manager) fast() bool { return !m.cfg.goRedisHot && !m.cfg.mut.defaultClientOptions }

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

// wireRound runs one hot command on every master as one multiplexed round and
// returns the results in declared order. value is the lock value; str is the
// release's wake-up channel and num the TTL in ms of SET and extend. Each master's
// command, dialling included, ends within the node timeout (or ctx's deadline when
// sooner); a cancellation of ctx during the round takes effect at its end.
func (m *Manager) wireRound(ctx context.Context, op, key string, cmd wireCmd, value, str string, num int64) *Report {
	rep := &Report{Op: op, Key: key, Quorum: m.quorum, Nodes: make([]NodeResult, len(m.nodes))}
	fail := func(err error) *Report {
		for i, n := range m.nodes {
			rep.Nodes[i] = NodeResult{Node: n.name, Outcome: OutcomeError, Err: n.explain(err)}
		}
		return rep
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	t0 := time.Now()
	deadline := t0.Add(m.cfg.nodeTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	set, err := m.wire.take(ctx, len(m.nodes))
	if err != nil {
		return fail(err)
	}
	defer m.wire.put(set)
	set.buf = appendWireCmd(set.buf[:0], cmd, key, value, str, num)
	if cmd == wireSet {
		set.bufGt = appendSetGet(set.bufGt[:0], key, value, num)
	}

	var dialed []int // nodes dialled this round: they run on their own goroutine
	// One write to every connected socket.
	for i, wc := range set.conns {
		// A connection the master closed while idle is dialled again, not failed. The
		// check costs a system call per master: a connection used within the last
		// wireFresh skips it (were it closed meanwhile, this round loses its vote, as
		// when a master fails during a round).
		if wc != nil && (wc.c.SetDeadline(deadline) != nil || wc.rd.Buffered() > 0 ||
			t0.Sub(wc.used) >= wireFresh && wc.check() != nil) {
			_ = wc.c.Close()
			set.conns[i], wc = nil, nil
		}
		if wc == nil {
			dialed = append(dialed, i)
			continue
		}
		if _, err := wc.c.Write(set.cmdFor(wc, cmd)); err != nil {
			m.wireResult(rep, set, i, t0, OutcomeError, "", err)
		}
	}
	// Masters without a connection dial in parallel with the reads below.
	for _, i := range dialed {
		set.wg.Add(1)
		go m.dialRound(ctx, set, rep, i, t0, deadline, cmd, key, value, str, num)
	}
	// Then the replies, in declared order.
	for i := range set.conns {
		if containsInt(dialed, i) || rep.Nodes[i].Node != "" {
			continue // dialled on its own goroutine, or its write failed
		}
		wc := set.conns[i]
		if now := time.Now(); !now.Before(deadline) {
			// The deadline passed while an earlier master's reply was awaited. A reply
			// that came in time waits in this socket, but a read past the deadline
			// fails without looking: give it a moment's grace. (Votes count from the
			// round's start whenever they arrive, so a late one is safe.)
			_ = wc.c.SetReadDeadline(now.Add(wireGrace))
		}
		out, holder, err := m.wireReply(wc, deadline, cmd, key, value, str, num)
		m.wireResult(rep, set, i, t0, out, holder, err)
	}
	set.wg.Wait()
	rep.Votes = rep.count(OutcomeOK)
	m.observeRound(rep)
	return rep
}

// dialRound dials node i, then runs the round's command on it.
func (m *Manager) dialRound(ctx context.Context, set *connSet, rep *Report, i int, t0, deadline time.Time, cmd wireCmd, key, value, str string, num int64) {
	defer set.wg.Done()
	n := m.nodes[i]
	wc, err := m.dialWire(ctx, n, deadline)
	if err != nil {
		rep.Nodes[i] = NodeResult{Node: n.name, Outcome: OutcomeError, Err: n.explain(err), Latency: time.Since(t0)}
		return
	}
	set.conns[i] = wc
	if _, err := wc.c.Write(set.cmdFor(wc, cmd)); err != nil {
		m.wireResult(rep, set, i, t0, OutcomeError, "", err)
		return
	}
	out, holder, err := m.wireReply(wc, deadline, cmd, key, value, str, num)
	m.wireResult(rep, set, i, t0, out, holder, err)
}

// cmdFor returns the round's command as wc's master takes it.
func (s *connSet) cmdFor(wc *wireConn, cmd wireCmd) []byte {
	if cmd == wireSet && wc.setGet {
		return s.bufGt
	}
	return s.buf
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// wireResult records node i's result; an error other than an error reply drops
// the node's connection.
func (m *Manager) wireResult(rep *Report, set *connSet, i int, t0 time.Time, out Outcome, holder string, err error) {
	n := m.nodes[i]
	if err != nil {
		var re replyError
		if !errors.As(err, &re) {
			if wc := set.conns[i]; wc != nil {
				_ = wc.c.Close()
				set.conns[i] = nil
			}
		}
		out, err = OutcomeError, n.explain(err)
	}
	if err == nil {
		set.conns[i].used = t0
	}
	rep.Nodes[i] = NodeResult{Node: n.name, Outcome: out, Err: err, Latency: time.Since(t0), holder: holder}
}

// wireReply reads the reply of cmd and maps it to an outcome; for a SET NX GET that
// found the key held, holder is the value there. A script the master does not know
// (NOSCRIPT: restart, SCRIPT FLUSH) is sent again with EVAL on the same connection,
// within the same deadline.
func (m *Manager) wireReply(wc *wireConn, deadline time.Time, cmd wireCmd, key, value, str string, num int64) (out Outcome, holder string, err error) {
	typ, line, err := wc.readLine()
	if err != nil {
		return OutcomeError, "", err
	}
	if typ == '-' && cmd == wireSet && wc.setGet && hasPrefix(line, "WRONGTYPE") {
		// GET cannot read a key of another type; like plain SET NX, it was not set.
		return OutcomeForeign, "", nil
	}
	if typ == '-' {
		if cmd != wireSet && hasPrefix(line, "NOSCRIPT") {
			buf := appendEval(nil, cmd, key, value, str, num)
			if now := time.Now(); !now.Before(deadline) {
				// NOSCRIPT came in time but was read after an earlier master's reply
				// used up the deadline: the fallback gets the same grace as a reply
				// already received (votes count from the round's start, so it is safe).
				_ = wc.c.SetDeadline(now.Add(wireGrace))
			}
			if _, err := wc.c.Write(buf); err != nil {
				return OutcomeError, "", err
			}
			if typ, line, err = wc.readLine(); err != nil {
				return OutcomeError, "", err
			}
			if typ == '-' {
				return OutcomeError, "", replyError(line)
			}
		} else {
			return OutcomeError, "", replyError(line)
		}
	}
	switch {
	case cmd == wireSet && wc.setGet:
		// SET NX GET answers nil when it set the key, the old value when it did not.
		if typ == '$' {
			n, ok := parseInt(line)
			switch {
			case ok && n == -1:
				return OutcomeOK, "", nil
			case ok && n >= 0 && n <= maxValueLen:
				v, err := wc.readBulkBody(n)
				if err != nil {
					return OutcomeError, "", err
				}
				return OutcomeForeign, v, nil
			}
		}
	case cmd == wireSet:
		switch {
		case typ == '+' && string(line) == "OK":
			return OutcomeOK, "", nil
		case typ == '$' && string(line) == "-1":
			return OutcomeForeign, "", nil
		}
	default:
		if typ == ':' {
			r, ok := parseInt(line)
			if ok {
				return outcomeOf(r), "", nil
			}
		}
	}
	return OutcomeError, "", fmt.Errorf("%w %q", errProtocol, typ)
}

// maxValueLen bounds the value a SET NX GET may read back: lock values are at most
// 256 bytes; anything much longer is not a lock and is not read.
const maxValueLen = 4096

func hasPrefix(b []byte, p string) bool { return len(b) >= len(p) && string(b[:len(p)]) == p }

// parseInt parses a RESP integer without allocating.
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// readLine reads one reply line and returns its type byte and its body (valid
// until the next read).
func (wc *wireConn) readLine() (byte, []byte, error) {
	line, err := wc.rd.ReadSlice('\n')
	if err != nil {
		return 0, nil, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return 0, nil, fmt.Errorf("%w: short line", errProtocol)
	}
	return line[0], line[1 : len(line)-2], nil
}

// readBulk reads a bulk string reply (INFO) into a new string; an error reply is a
// replyError.
func (wc *wireConn) readBulk() (string, error) {
	typ, line, err := wc.readLine()
	switch {
	case err != nil:
		return "", err
	case typ == '-':
		return "", replyError(line)
	case typ != '$':
		return "", fmt.Errorf("%w %q", errProtocol, typ)
	}
	n, ok := parseInt(line)
	if !ok || n < 0 {
		return "", fmt.Errorf("%w: bulk length", errProtocol)
	}
	return wc.readBulkBody(n)
}

// readBulkBody reads the n bytes of a bulk string and its CRLF.
func (wc *wireConn) readBulkBody(n int64) (string, error) {
	data := make([]byte, n+2)
	if _, err := io.ReadFull(wc.rd, data); err != nil {
		return "", err
	}
	return string(data[:n]), nil
}

// readOK reads a simple-string reply; an error reply is a replyError.
func (wc *wireConn) readOK() error {
	typ, line, err := wc.readLine()
	switch {
	case err != nil:
		return err
	case typ == '-':
		return replyError(line)
	case typ != '+':
		return fmt.Errorf("%w %q", errProtocol, typ)
	}
	return nil
}

// dialWire connects to n within deadline (the node's Dialer when set, else TCP;
// then TLS when configured) and runs the handshake: AUTH, SELECT, and INFO server
// fed to the restart quarantine before any vote on this connection counts.
func (m *Manager) dialWire(ctx context.Context, n *node, deadline time.Time) (*wireConn, error) {
	dctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	var (
		c   net.Conn
		err error
	)
	if n.spec.Dialer != nil {
		c, err = n.spec.Dialer(dctx, "tcp", n.spec.Addr)
	} else {
		var d net.Dialer
		c, err = d.DialContext(dctx, "tcp", n.spec.Addr)
	}
	if err != nil {
		if dctx.Err() != nil && ctx.Err() == nil {
			return nil, fmt.Errorf("dial: no connection within the node timeout: %w", err)
		}
		return nil, err
	}
	if err := c.SetDeadline(deadline); err != nil {
		_ = c.Close()
		return nil, err
	}
	if n.tls != nil {
		tc := tls.Client(c, n.tls)
		if err := tc.HandshakeContext(dctx); err != nil {
			_ = c.Close()
			// The connection's deadline and dctx's end together: either may fire.
			if ctx.Err() == nil && !time.Now().Before(deadline) {
				return nil, fmt.Errorf("tls handshake: not done within the node timeout: %w", err)
			}
			return nil, fmt.Errorf("tls handshake: %w", err)
		}
		c = tc
	}
	wc := &wireConn{c: c, rd: bufio.NewReaderSize(c, 4096)}
	wc.probe.init(c)
	if err := m.handshake(wc, n); err != nil {
		_ = c.Close()
		return nil, err
	}
	return wc, nil
}

// handshake authenticates, selects the database, and reads INFO server and INFO
// replication: the server's version decides whether SET NX GET is used, and both
// feed the restart quarantine. Without the quarantine, a refused INFO only means
// plain SET NX.
func (m *Manager) handshake(wc *wireConn, n *node) error {
	var buf []byte
	auth, sel, quar := n.spec.Password != "", n.spec.DB != 0, m.cfg.quarantine > 0
	if auth {
		if n.spec.Username != "" {
			buf = appendArray(buf, 3)
			buf = appendBulk(buf, "AUTH")
			buf = appendBulk(buf, n.spec.Username)
		} else {
			buf = appendArray(buf, 2)
			buf = appendBulk(buf, "AUTH")
		}
		buf = appendBulk(buf, n.spec.Password)
	}
	if sel {
		buf = appendArray(buf, 2)
		buf = appendBulk(buf, "SELECT")
		buf = appendBulkInt(buf, int64(n.spec.DB))
	}
	buf = appendArray(buf, 2)
	buf = appendBulk(buf, "INFO")
	buf = appendBulk(buf, "server")
	if quar {
		buf = appendArray(buf, 2)
		buf = appendBulk(buf, "INFO")
		buf = appendBulk(buf, "replication")
	}
	if _, err := wc.c.Write(buf); err != nil {
		return err
	}
	if auth {
		if err := wc.readOK(); err != nil {
			return fmt.Errorf("AUTH: %w", err)
		}
	}
	if sel {
		if err := wc.readOK(); err != nil {
			return fmt.Errorf("SELECT %d: %w", n.spec.DB, err)
		}
	}
	server, err := wc.readBulk()
	var re replyError
	switch {
	case err == nil:
		wc.setGet = setGetSupported(server)
	case !quar && errors.As(err, &re):
		// INFO refused (an ACL): plain SET NX, which tells less on a failed round.
	case !quar:
		return fmt.Errorf("INFO server: %w", err)
	default:
		return n.refusedInfo(err)
	}
	if quar {
		repl, err := wc.readBulk()
		if err != nil {
			return n.refusedInfo(err)
		}
		m.quarantined(n, n.observe(server, repl, m.cfg.clock.Now(), m.cfg.quarantine))
	}
	return nil
}

// refusedInfo records and returns the error of an INFO the quarantine needs.
func (n *node) refusedInfo(err error) error {
	err = fmt.Errorf("restart quarantine needs INFO server and INFO replication (grant +info, or turn restart_quarantine off): %w", err)
	n.mu.Lock()
	n.connectErr = err
	n.mu.Unlock()
	return err
}

// setGetSupported reports whether INFO server describes a server that takes SET
// with both NX and GET: Redis 7.0 or later, and Valkey (which reports a Redis
// version of 7.2 or later).
func setGetSupported(info string) bool {
	v := infoField(info, "redis_version")
	major, _, _ := strings.Cut(v, ".")
	n, err := strconv.Atoi(major)
	return err == nil && n >= 7
}

// tlsFor returns the TLS configuration used on n's raw connections: cfg with the
// server name taken from the address when unset, as tls.Dial does.
func tlsFor(cfg *tls.Config, addr string) *tls.Config {
	if cfg == nil {
		return nil
	}
	if cfg.ServerName != "" || cfg.InsecureSkipVerify {
		return cfg
	}
	c := cfg.Clone()
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	c.ServerName = host
	return c
}

// dialTLS returns dial with a TLS client on top when cfg is set. go-redis negotiates
// TLS only with its own dialer: a custom Dialer must do it itself, or the commands go
// out in plain text. The handshake ends with ctx (go-redis bounds it by DialTimeout).
func dialTLS(dial func(ctx context.Context, network, addr string) (net.Conn, error), cfg *tls.Config) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if cfg == nil {
		return dial
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		tc := tls.Client(c, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = c.Close()
			return nil, fmt.Errorf("tls handshake: %w", err)
		}
		return tc, nil
	}
}

// appendWireCmd appends cmd as a RESP array.
func appendWireCmd(b []byte, cmd wireCmd, key, value, str string, num int64) []byte {
	switch cmd {
	case wireSet:
		b = appendArray(b, 6)
		b = appendBulk(b, "SET")
		b = appendBulk(b, key)
		b = appendBulk(b, value)
		b = appendBulk(b, "NX")
		b = appendBulk(b, "PX")
		return appendBulkInt(b, num)
	case wireRelease:
		b = appendArray(b, 6)
		b = appendBulk(b, "EVALSHA")
		b = appendBulk(b, releaseScript.Hash())
	default:
		b = appendArray(b, 6)
		b = appendBulk(b, "EVALSHA")
		b = appendBulk(b, extendScript.Hash())
	}
	return appendScriptArgs(b, cmd, key, value, str, num)
}

// appendSetGet appends SET key value NX GET PX ms.
func appendSetGet(b []byte, key, value string, num int64) []byte {
	b = appendArray(b, 7)
	b = appendBulk(b, "SET")
	b = appendBulk(b, key)
	b = appendBulk(b, value)
	b = appendBulk(b, "NX")
	b = appendBulk(b, "GET")
	b = appendBulk(b, "PX")
	return appendBulkInt(b, num)
}

// appendEval appends cmd's script with EVAL (after NOSCRIPT).
func appendEval(b []byte, cmd wireCmd, key, value, str string, num int64) []byte {
	b = appendArray(b, 6)
	b = appendBulk(b, "EVAL")
	if cmd == wireRelease {
		b = appendBulk(b, releaseLua)
	} else {
		b = appendBulk(b, extendLua)
	}
	return appendScriptArgs(b, cmd, key, value, str, num)
}

func appendScriptArgs(b []byte, cmd wireCmd, key, value, str string, num int64) []byte {
	b = appendBulk(b, "1")
	b = appendBulk(b, key)
	b = appendBulk(b, value)
	if cmd == wireRelease {
		return appendBulk(b, str)
	}
	return appendBulkInt(b, num)
}

func appendArray(b []byte, n int) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\r', '\n')
}

func appendBulk(b []byte, s string) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, '\r', '\n')
	b = append(b, s...)
	return append(b, '\r', '\n')
}

func appendBulkInt(b []byte, n int64) []byte {
	var tmp [20]byte
	d := strconv.AppendInt(tmp[:0], n, 10)
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(d)), 10)
	b = append(b, '\r', '\n')
	b = append(b, d...)
	return append(b, '\r', '\n')
}
