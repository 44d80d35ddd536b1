package quorum

import (
	"context"
	"errors"
	"fmt"
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

// withGoRedisHot sends the hot commands through go-redis instead of the fast path.
// Tests only.
func withGoRedisHot() Option { return func(c *config) { c.goRedisHot = true } }

// fast tells whether the hot commands take the wire fast path. The go-redis path
// stays for the defaultClientOptions mutant, which is about go-redis's options.
func (m *Manager) fast() bool { return !m.cfg.goRedisHot && !m.cfg.mut.defaultClientOptions }

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
