// Package wire is the transport of the lock's hot commands: one command sent to
// every master as one round, under a deadline, on raw RESP2 connections of its
// own, auto-pipelined.
//
// Each master has one pipe (pipe.go), a connection shared by every round in
// flight, with a queue of commands waiting to be written, one batch of them in
// flight at a time, and a driver that writes the next batch once the last one's
// replies are read, matching replies to commands in the order they were written
// (a master answers a connection's commands in order). A round queues its command
// on every master's pipe at once and waits, until its deadline, for the replies.
// The commands of concurrent rounds leave in one write per master; a master that
// is slow or dead delays only its own pipe.
//
// Why a late reply can never be taken for another command's: a round that gives up
// (deadline, cancellation) marks its commands abandoned. One not yet written is
// never written; one already written keeps its place, and its reply, when it comes,
// is read and thrown away (EventLateReply). A master that leaves the oldest command
// on a connection unanswered for a whole timeout is taken as hung: the connection
// is closed (EventDropped) and every command on it fails, so nothing is ever read
// from it again; so is a connection that answers out of step (a reply of a type
// the command cannot get, a reply to no command). A new connection is dialled for
// the next command, with its handshake (TLS, AUTH, SELECT, INFO) done before
// anything is written on it. Nothing is ever sent twice.
package wire

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

// grace is how long a round waits past its deadline for replies that came in time
// but were not yet read (a caller counting from the round's start counts a late
// one safely).
const grace = 2 * time.Millisecond

// patience is the least a round reading its own replies waits for one master
// before it reads the next (readOwn).
const patience = 2 * time.Millisecond

// States of a req. Each change is a compare-and-swap, so the round and the pipe
// never both decide a command's fate.
const (
	reqQueued    uint32 = iota // in a pipe's queue, not written
	reqWritten                 // written; its reply is awaited
	reqDone                    // the pipe set its result (a reply, or a failure)
	reqAbandoned               // the round gave up: never written, or its reply is discarded
)

// req is one round's command on one master.
type req struct {
	rnd   *round
	idx   int // the master's index in the round
	state atomic.Uint32
	eval  bool      // write the script with EVAL (after NOSCRIPT); pipe only
	nxget bool      // written as SET NX GET; pipe only
	sent  time.Time // when it was written; under the pipe's lock
	// polled is the connection the round's poll found the pipe idle on, and
	// pollBusy whether the socket had something to read or an error then
	// (precheck, idleCheck); used once.
	polled   *pipeConn
	pollBusy bool
	// The result, set by the pipe before it tells the round.
	res Result
}

// round is one round in flight. A round none of whose commands was abandoned is
// reused; one with an abandoned command may still be referenced by a pipe and is
// left to the garbage collector. It keeps its own copy of the command: a pipe may
// encode it (EVAL after NOSCRIPT) after the caller got its results.
type round struct {
	reqs         []req
	own          []*pipeConn // where the round holds the reader's role
	script       *Script
	keys, args   []string
	want         string
	nxget        bool
	buf, bufGt   []byte // the command, encoded once for every master
	t0, deadline time.Time
	remaining    atomic.Int32  // commands without a result yet
	done         chan struct{} // receives once, when remaining reaches 0
	// granted, quorum: Cmd.Granted and Cmd.Quorum; votes counts the results
	// granted approved, refusals the others (replies and failures), lost is
	// how many refusals leave no quorum possible (the masters asked - quorum +
	// 1); decidedAt (Unix ns) is when the votes reached quorum or the refusals
	// lost, and early receives once then.
	granted   func(int, *Result) bool
	quorum    int32
	lost      int32
	votes     atomic.Int32
	refusals  atomic.Int32
	decidedAt atomic.Int64
	early     chan struct{}
	timer     *time.Timer
	// fdConn[i] is the last connection of master i the round polled, fd[i] its
	// socket's descriptor (precheck).
	fdConn []*pipeConn
	fd     []int32
}

// finish records r's result, read (or failed) at now, and tells the round when it
// was the last. The caller has just moved r to reqDone.
func (rd *round) finish(r *req, res Result, now time.Time) {
	res.NXGet = r.nxget
	res.Latency = now.Sub(rd.t0)
	r.res = res
	if rd.granted != nil {
		// Grants and refusals cannot both reach their mark (votes + refusals
		// <= the masters asked < quorum + lost): early receives once.
		if res.Type != 0 && res.Err == nil && rd.granted(r.idx, &r.res) {
			if rd.votes.Add(1) == rd.quorum {
				rd.decide(now)
			}
		} else if rd.refusals.Add(1) == rd.lost {
			rd.decide(now)
		}
	}
	if rd.remaining.Add(-1) == 0 {
		rd.done <- struct{}{}
	}
}

// decide records that the round's outcome was decided at now (a quorum granted,
// or refused), and tells the round.
func (rd *round) decide(now time.Time) {
	rd.decidedAt.Store(now.UnixNano())
	rd.early <- struct{}{}
}

// fail records a failure without a reply as r's result.
func (rd *round) fail(r *req, err error) { rd.finish(r, Result{Err: err}, time.Now()) }

// appendTo appends the round's command as a master takes it: with GET when it
// takes SET NX GET, with EVAL when it did not know the script.
func (rd *round) appendTo(b []byte, eval, setGet bool) []byte {
	switch {
	case eval:
		return appendScript(b, true, rd.script, rd.keys, rd.args)
	case rd.nxget && setGet:
		return append(b, rd.bufGt...)
	}
	return append(b, rd.buf...)
}

// encoded returns the round's command as a master that takes SET NX GET (setGet)
// or not takes it, without EVAL: the round's own buffer, not a copy.
func (rd *round) encoded(setGet bool) []byte {
	if rd.nxget && setGet {
		return rd.bufGt
	}
	return rd.buf
}

// wants reports whether a reply of type typ fits the command as written
// (nxget: as SET NX GET).
func (rd *round) wants(typ byte, nxget bool) bool {
	switch {
	case typ == '-':
		return true
	case nxget:
		return typ == '$'
	case rd.want == "":
		return typ == '+' || typ == ':' || typ == '$'
	}
	for i := 0; i < len(rd.want); i++ {
		if rd.want[i] == typ {
			return true
		}
	}
	return false
}

// rounds keeps finished rounds for reuse. A buffered channel rather than a
// sync.Pool: a pool may drop what it is given (it does so on purpose under the race
// detector), and a round is a handful of allocations.
type rounds struct{ free chan *round }

func (p *rounds) get(n int) *round {
	select {
	case rd := <-p.free:
		return rd
	default:
	}
	rd := &round{reqs: make([]req, n), own: make([]*pipeConn, n), done: make(chan struct{}, 1), early: make(chan struct{}, 1), timer: time.NewTimer(time.Hour)}
	rd.timer.Stop()
	for i := range rd.reqs {
		rd.reqs[i].rnd, rd.reqs[i].idx = rd, i
	}
	return rd
}

func (p *rounds) put(rd *round) {
	select {
	case p.free <- rd:
	default:
	}
}

// Round sends cmd to every master as one pipelined round (Rounder). cmd is not
// referenced after Round returns.
func (ps *Pipes) Round(ctx context.Context, cmd *Cmd, out []Result) {
	if err := ctx.Err(); err != nil {
		for i := range out {
			out[i] = Result{Err: err}
		}
		return
	}
	t0 := time.Now()
	deadline := t0.Add(ps.cfg.Timeout)
	ctxDeadline, hasDeadline := ctx.Deadline()
	if hasDeadline && ctxDeadline.Before(deadline) {
		deadline = ctxDeadline
	}
	rd := ps.rounds.get(len(ps.pipes))
	rd.script, rd.want, rd.nxget = cmd.Script, cmd.Want, cmd.NXGet
	rd.granted, rd.quorum = nil, 0
	if cmd.Granted != nil && cmd.Quorum > 0 && cmd.Quorum <= len(rd.reqs) {
		rd.granted, rd.quorum = cmd.Granted, int32(cmd.Quorum)
	}
	rd.votes.Store(0)
	rd.refusals.Store(0)
	rd.decidedAt.Store(0)
	select {
	case <-rd.early: // a reused round's, from a round that did not wait for it
	default:
	}
	rd.keys = append(rd.keys[:0], cmd.Keys...)
	rd.args = append(rd.args[:0], cmd.Args...)
	rd.t0, rd.deadline = t0, deadline
	if cmd.Script != nil {
		rd.buf = appendScript(rd.buf[:0], false, cmd.Script, cmd.Keys, cmd.Args)
	} else {
		rd.buf = appendCommand(rd.buf[:0], cmd.Args)
	}
	if cmd.NXGet {
		rd.bufGt = appendSetGet(rd.bufGt[:0], cmd.Args)
	}
	asked := len(rd.reqs)
	for i := range rd.reqs {
		r := &rd.reqs[i]
		r.eval, r.nxget, r.res, r.polled = false, false, Result{}, nil
		if cmd.Only != nil && !cmd.Only[i] {
			r.res = Result{Err: ErrNotAsked}
			r.state.Store(reqDone)
			asked--
			continue
		}
		r.state.Store(reqQueued)
	}
	rd.remaining.Store(int32(asked))
	rd.lost = int32(asked) - rd.quorum + 1 // set before any command can finish
	if asked == 0 {
		for i := range out {
			out[i] = rd.reqs[i].res
		}
		ps.rounds.put(rd)
		return
	}
	ps.active.Add(1)
	defer ps.roundEnded()
	if len(rd.reqs) > 1 && cmd.Only == nil {
		ps.precheck(rd)
	}
	// The last master first: the first masters are those that a waiter listens on
	// for wake-ups (quorum's narrow masters), so that a release's wake-up comes
	// from a master written after the others, never before the release is on its
	// way to them (a round held up between two writes, its thread preempted by
	// the master it just woke, would otherwise let the woken waiter's round reach
	// the others first, and be refused there).
	own := 0
	for i := len(rd.reqs) - 1; i >= 0; i-- {
		if rd.own[i] = nil; cmd.Only != nil && !cmd.Only[i] {
			continue
		}
		rd.own[i] = ps.pipes[i].submit(&rd.reqs[i])
		if rd.own[i] != nil {
			own++
		}
		if ps.cfg.Submitted != nil {
			ps.cfg.Submitted(i, cmd)
		}
	}
	if own > 0 {
		ps.readOwn(ctx, rd, deadline)
	}

	cause := ErrNoReply
	finished, over := false, false
	select {
	case <-rd.done: // every reply read already (readOwn): no timer
		finished = true
	default:
		rd.timer.Reset(time.Until(deadline) + grace)
	}
	cancelled := ctx.Done()
	for !finished && !over {
		select {
		case <-rd.done:
			finished = true
		case <-rd.early:
			// A quorum granted, or refused: the others get their share of
			// afterQuorum, within the deadline.
			if until := rd.awaitUntil(); until.Before(deadline.Add(grace)) {
				rd.timer.Reset(time.Until(until))
				cause = ErrNotAwaited
			}
		case <-rd.timer.C:
			if cause == ErrNotAwaited {
				// That time is over: a master still answering (a reply read
				// from it within that time, to this round or another) is slow,
				// not stopped, and is waited for up to the deadline.
				if more := time.Until(deadline.Add(grace)); more > 0 && ps.answering(rd, time.Now(), rd.awaitSpan()) {
					rd.timer.Reset(min(more, rd.awaitSpan()))
					continue
				}
			}
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
	if e := ctx.Err(); e != nil && !finished && cause == ErrNoReply && hasDeadline && !ctxDeadline.After(deadline) {
		cause = e // the caller's deadline, not the timeout, ended the round
	}
	abandoned := 0
	if !finished {
		abandoned = rd.abandon()
		if abandoned == 0 || rd.remaining.Add(-int32(abandoned)) != 0 {
			<-rd.done // a command moved to done just now: its result is imminent
		}
	}
	for i := range out {
		r := &rd.reqs[i]
		if r.state.Load() == reqAbandoned {
			out[i] = Result{Err: cause, Latency: time.Since(t0)}
			continue
		}
		out[i] = r.res
	}
	if abandoned == 0 {
		ps.rounds.put(rd)
	}
}

// readOwn reads the replies of the masters where the round wrote its command on an
// idle connection and holds the reader's role. A master slower than its patience
// is left to a reader goroutine (its reply reaches the round all the same). A
// cancellation of ctx ends the reads at once.
func (ps *Pipes) readOwn(ctx context.Context, rd *round, deadline time.Time) {
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
	// goroutines. A round that ends at a quorum (Cmd.Granted) waits only its
	// patience on each master, in both passes.
	for pass := range 2 {
		for i, pc := range rd.own {
			if pc == nil {
				continue
			}
			now := time.Now()
			d := now.Add(max(patience, deadline.Sub(now)/2))
			if rd.granted != nil {
				// Rounds that end at a quorum never wait long on one master
				// here: while they did, the replies of the others (on their own
				// connections too) lay unread, a quorum that needed one of them
				// came late, and twice its time outlasted the deadline. What
				// is left goes to reader goroutines, which read every master
				// at once.
				d = now.Add(patience)
			}
			if until := rd.awaitUntil(); !until.IsZero() && until.Before(d) {
				d = until
			}
			if deadline.Before(d) {
				d = deadline
			}
			if errors.Is(ctx.Err(), context.Canceled) {
				d = now // only what is already buffered
			}
			if ps.pipes[i].readOwn(ctx, pc, &rd.reqs[i], d, pass == 1) {
				rd.own[i] = nil
			}
		}
	}
}

// afterQuorum is how long a round whose Cmd sets Granted waits for the other
// masters once its outcome is decided (a quorum granted, or refused), at least:
// twice as long as the decision took, when that is longer. Then only a master
// that answered nothing meanwhile is given up (Pipes.answering): under load the
// masters' batches end apart, and with 256 acquisitions in flight on five masters
// 0.9 % of the masters' answers came later than 2 ms or the quorum's own time
// after the quorum.
const afterQuorum = 5 * time.Millisecond

// awaitUntil is when a round stops waiting for the masters that have not answered,
// its outcome decided, unless they are still answering (Pipes.answering); zero
// while undecided.
func (rd *round) awaitUntil() time.Time {
	q := rd.decidedAt.Load()
	if q == 0 {
		return time.Time{}
	}
	return time.Unix(0, q).Add(rd.awaitSpan())
}

// awaitSpan is how long a round waits for the other masters once its outcome is
// decided: twice the time the decision took, afterQuorum at least.
func (rd *round) awaitSpan() time.Duration {
	return max(afterQuorum, 2*time.Duration(rd.decidedAt.Load()-rd.t0.UnixNano()))
}

// answering reports whether a master the round still waits for is answering at
// its pace, slow rather than stopped: a reply read from it, or its oldest
// unanswered command written, within span or three times as long as its last
// answer took (a distant master, or one answering big batches, reads nothing for
// a while).
func (ps *Pipes) answering(rd *round, now time.Time, span time.Duration) bool {
	for i := range rd.reqs {
		if rd.reqs[i].state.Load() == reqDone {
			continue
		}
		p := ps.pipes[i]
		window := max(span, 3*time.Duration(p.lastTook.Load()))
		if p.lastRead.Load() >= now.Add(-window).UnixNano() {
			return true
		}
		if w := p.oldestWritten(); !w.IsZero() && now.Sub(w) < window {
			return true
		}
	}
	return false
}

// oldestWritten returns when the oldest command awaiting its reply on the
// pipe's connection was written; zero when none is (or there is no connection).
func (p *pipe) oldestWritten() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pc := p.conn; pc != nil {
		if h := pc.inflight.peek(); h != nil {
			return h.sent
		}
	}
	return time.Time{}
}

// abandon gives up every command without a result and returns how many.
func (rd *round) abandon() int {
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
