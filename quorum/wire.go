package quorum

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"
)

// The wire fast path runs the hot commands (acquire's SET NX PX, release's and
// extend's scripts) on raw RESP2 connections of the Manager's own, auto-pipelined:
// each master has one pipe (wire_pipe.go), a connection shared by every round in
// flight, with a queue of commands waiting to be written and a reader that matches
// replies to commands in the order they were written (a master answers a
// connection's commands in order). A round queues its command on every master's
// pipe at once and waits, until its deadline, for the replies. The commands of
// concurrent rounds leave in one write per master; a master that is slow or dead
// delays only its own pipe. Everything else goes through go-redis.
//
// Why a late reply can never be taken for another command's: a round that gives up
// (deadline, cancellation) marks its commands abandoned. One not yet written is
// never written; one already written keeps its place, and its reply, when it comes,
// is read and thrown away. A master that leaves the oldest command on a connection
// unanswered for a whole node timeout is taken as hung: the connection is closed
// and every command on it fails, so nothing is ever read from it again. A new
// connection is dialled for the next command, with the same handshake as
// go-redis's (AUTH, SELECT, TLS, and INFO for the restart quarantine) before
// anything is written on it.
//
// Validity counts from the caller's clock reading before the command is queued,
// so time spent waiting in a queue only shortens it.

// wireCmd is one hot command.
type wireCmd uint8

const (
	wireSet     wireCmd = iota // SET key value NX PX ms, or SET key value NX GET PX ms
	wireRelease                // EVALSHA release.lua 1 key value channel
	wireExtend                 // EVALSHA extend.lua 1 key value ms
	wireFair                   // EVALSHA fair_acquire.lua 2 key queue value ms id score hb mode
)

// wireGrace is how long a round waits past its deadline for replies that came in
// time but were not yet read (votes count from the round's start, so a late one is
// safe).
const wireGrace = 2 * time.Millisecond

// wirePatience is the least a round reading its own replies waits for one master
// before it reads the next (readOwn).
const wirePatience = 2 * time.Millisecond

// errProtocol is a reply the fast path did not expect; the connection is dropped.
var errProtocol = errors.New("unexpected reply")

// errNoReply is the result of a command the master did not answer in time.
var errNoReply = fmt.Errorf("no reply within the node timeout: %w", os.ErrDeadlineExceeded)

// replyError is an error reply of a master ("WRONGTYPE ...", "NOPERM ...").
type replyError string

func (e replyError) Error() string { return string(e) }

// withGoRedisHot sends the hot commands through go-redis instead of the fast path.
// Tests only.
func withGoRedisHot() Option { return func(c *config) { c.goRedisHot = true } }

// fast tells whether the hot commands take the wire fast path. The go-redis path
// stays for the defaultClientOptions mutant, which is about go-redis's options.
func (m *Manager) fast() bool { return !m.cfg.goRedisHot && !m.cfg.mut.defaultClientOptions }

// States of a wireReq. Each change is a compare-and-swap, so the round and the
// pipe never both decide a command's fate.
const (
	reqQueued    uint32 = iota // in a pipe's queue, not written
	reqWritten                 // written; its reply is awaited
	reqDone                    // the pipe set its result (a reply, or a failure)
	reqAbandoned               // the round gave up: never written, or its reply is discarded
)

// wireReq is one round's command on one master.
type wireReq struct {
	rnd   *wireRound
	state atomic.Uint32
	eval  bool      // write the script with EVAL (after NOSCRIPT); pipe only
	sent  time.Time // when it was written; under the pipe's lock
	// The result, set by the pipe before it tells the round.
	out    Outcome
	holder string
	err    error
	lat    time.Duration
}

// wireRound is one round in flight. A round none of whose commands was abandoned is
// reused; one with an abandoned command may still be referenced by a pipe and is
// left to the garbage collector.
type wireRound struct {
	reqs            []wireReq
	own             []*pipeConn // where the round holds the reader's role
	cmd             wireCmd
	key, value, str string
	num             int64
	fw              *fairWaiter // wireFair's waiter
	buf, bufGt      []byte      // the command, encoded once for every master
	t0, deadline    time.Time
	remaining       atomic.Int32  // commands without a result yet
	done            chan struct{} // receives once, when remaining reaches 0
	timer           *time.Timer
}

// finish records r's result and tells the round when it was the last. The caller
// has just moved r to reqDone.
func (rd *wireRound) finish(r *wireReq, out Outcome, holder string, err error) {
	r.out, r.holder, r.err, r.lat = out, holder, err, time.Since(rd.t0)
	if rd.remaining.Add(-1) == 0 {
		rd.done <- struct{}{}
	}
}

// appendTo appends the round's command as a master takes it: with GET when it
// takes SET NX GET, with EVAL when it did not know the script.
func (rd *wireRound) appendTo(b []byte, eval, setGet bool) []byte {
	switch {
	case eval && rd.cmd == wireFair:
		return appendFair(b, true, rd.key, rd.value, rd.num, rd.fw)
	case eval:
		return appendEval(b, rd.cmd, rd.key, rd.value, rd.str, rd.num)
	case rd.cmd == wireSet && setGet:
		return append(b, rd.bufGt...)
	}
	return append(b, rd.buf...)
}

// wireRounds keeps finished rounds for reuse. A buffered channel rather than a
// sync.Pool: a pool may drop what it is given (it does so on purpose under the race
// detector), and a round is a handful of allocations.
type wireRounds struct{ free chan *wireRound }

func (p *wireRounds) get(n int) *wireRound {
	select {
	case rd := <-p.free:
		return rd
	default:
	}
	rd := &wireRound{reqs: make([]wireReq, n), own: make([]*pipeConn, n), done: make(chan struct{}, 1), timer: time.NewTimer(time.Hour)}
	rd.timer.Stop()
	for i := range rd.reqs {
		rd.reqs[i].rnd = rd
	}
	return rd
}

func (p *wireRounds) put(rd *wireRound) {
	select {
	case p.free <- rd:
	default:
	}
}

// wireRound runs one hot command on every master as one pipelined round and
// returns the results in declared order. value is the lock value; str is the
// release's wake-up channel and num the TTL in ms of SET and extend. Each master's
// command, dialling included, ends within the node timeout (or ctx's deadline when
// sooner); a cancellation of ctx ends the round at once, counting the masters that
// had not answered as failed (their commands may still take effect).
func (m *Manager) wireRound(ctx context.Context, op, key string, cmd wireCmd, value, str string, num int64) *Report {
	return m.wireRoundFor(ctx, op, key, cmd, value, str, num, nil)
}

// wireFairRound runs fair_acquire.lua for w on every master as one round.
func (m *Manager) wireFairRound(ctx context.Context, key, value string, ms int64, w *fairWaiter) *Report {
	return m.wireRoundFor(ctx, opAcquire, key, wireFair, value, "", ms, w)
}

func (m *Manager) wireRoundFor(ctx context.Context, op, key string, cmd wireCmd, value, str string, num int64, fw *fairWaiter) *Report {
	rep := &Report{Op: op, Key: key, Quorum: m.quorum, Nodes: make([]NodeResult, len(m.nodes))}
	if err := ctx.Err(); err != nil {
		for i, n := range m.nodes {
			rep.Nodes[i] = NodeResult{Node: n.name, Outcome: OutcomeError, Err: n.explain(err)}
		}
		return rep
	}
	t0 := time.Now()
	deadline := t0.Add(m.cfg.nodeTimeout)
	ctxDeadline, hasDeadline := ctx.Deadline()
	if hasDeadline && ctxDeadline.Before(deadline) {
		deadline = ctxDeadline
	}
	rd := m.rounds.get(len(m.nodes))
	rd.cmd, rd.key, rd.value, rd.str, rd.num = cmd, key, value, str, num
	rd.t0, rd.deadline = t0, deadline
	rd.fw = fw
	if cmd == wireFair {
		rd.buf = appendFair(rd.buf[:0], false, key, value, num, fw)
	} else {
		rd.buf = appendWireCmd(rd.buf[:0], cmd, key, value, str, num)
	}
	if cmd == wireSet {
		rd.bufGt = appendSetGet(rd.bufGt[:0], key, value, num)
	}
	rd.remaining.Store(int32(len(rd.reqs)))
	for i := range rd.reqs {
		r := &rd.reqs[i]
		r.eval, r.out, r.holder, r.err, r.lat = false, OutcomeError, "", nil, 0
		r.state.Store(reqQueued)
	}
	own := 0
	for i := range rd.reqs {
		rd.own[i] = m.pipes[i].submit(&rd.reqs[i])
		if rd.own[i] != nil {
			own++
		}
	}
	if own > 0 {
		m.readOwn(ctx, rd, deadline)
	}

	cause := errNoReply
	rd.timer.Reset(time.Until(deadline) + wireGrace)
	cancelled := ctx.Done()
	finished, over := false, false
	for !finished && !over {
		select {
		case <-rd.done:
			finished = true
		case <-rd.timer.C:
			over = true
		case <-cancelled:
			// A deadline of ctx is the round's own, with its grace: only a
			// cancellation ends the round early.
			cancelled = nil
			if errors.Is(ctx.Err(), context.Canceled) {
				cause, over = context.Cause(ctx), true
			}
		}
	}
	rd.timer.Stop()
	if e := ctx.Err(); e != nil && !finished && cause == errNoReply && hasDeadline && !ctxDeadline.After(deadline) {
		cause = e // the caller's deadline, not the node timeout, ended the round
	}
	abandoned := 0
	if !finished {
		abandoned = rd.abandon()
		if abandoned == 0 || rd.remaining.Add(-int32(abandoned)) != 0 {
			<-rd.done // a command moved to done just now: its result is imminent
		}
	}
	for i, n := range m.nodes {
		r := &rd.reqs[i]
		if r.state.Load() == reqAbandoned {
			rep.Nodes[i] = NodeResult{Node: n.name, Outcome: OutcomeError, Err: n.explain(cause), Latency: time.Since(t0)}
			continue
		}
		nr := NodeResult{Node: n.name, Outcome: r.out, Latency: r.lat, holder: r.holder}
		if r.err != nil {
			nr.Outcome, nr.Err = OutcomeError, n.explain(r.err)
		}
		rep.Nodes[i] = nr
	}
	if abandoned == 0 {
		m.rounds.put(rd)
	}
	rep.Votes = rep.count(OutcomeOK)
	m.observeRound(rep)
	return rep
}

// readOwn reads the replies of the masters where the round wrote its command on an
// idle connection and holds the reader's role. A master slower than its patience
// is left to a reader goroutine (its reply reaches the round all the same). A
// cancellation of ctx ends the reads at once.
func (m *Manager) readOwn(ctx context.Context, rd *wireRound, deadline time.Time) {
	if ctx.Done() != nil {
		conns := make([]*pipeConn, 0, len(rd.own))
		for _, pc := range rd.own {
			if pc != nil {
				conns = append(conns, pc)
			}
		}
		stop := context.AfterFunc(ctx, func() {
			if errors.Is(ctx.Err(), context.Canceled) {
				for _, pc := range conns {
					_ = pc.wc.c.SetReadDeadline(time.Now())
				}
			}
		})
		defer stop()
	}
	// Up to half the time left for each master, in two passes: a busy machine's
	// slow scheduling is not taken for a slow master (a hand-off costs a
	// goroutine's wake-up), and a hung master still leaves time to read the others
	// and to send a NOSCRIPT's EVAL before the deadline. While the round waits on
	// one master, a command another round writes behind its own on another master
	// takes that connection's reader's role over (writeBatch), so the round never
	// holds up other rounds. What is left after the second pass goes to reader
	// goroutines.
	for pass := range 2 {
		for i, pc := range rd.own {
			if pc == nil {
				continue
			}
			now := time.Now()
			d := now.Add(max(wirePatience, deadline.Sub(now)/2))
			if deadline.Before(d) {
				d = deadline
			}
			if errors.Is(ctx.Err(), context.Canceled) {
				d = now // only what is already buffered
			}
			if m.pipes[i].readOwn(pc, &rd.reqs[i], d, pass == 1) {
				rd.own[i] = nil
			}
		}
	}
}

// abandon gives up every command without a result and returns how many.
func (rd *wireRound) abandon() int {
	n := 0
	for i := range rd.reqs {
		st := &rd.reqs[i].state
		for {
			s := st.Load()
			if s == reqDone {
				break
			}
			if st.CompareAndSwap(s, reqAbandoned) {
				n++
				break
			}
		}
	}
	return n
}
