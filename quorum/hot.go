package quorum

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock/redlock/internal/wire"
	"github.com/redlock/redlock/quorum/observe"
)

// The hot commands (acquire's SET NX PX and fair script, release's and extend's
// scripts) go to every master as one round of a wire.Rounder: the pipelined
// transport of package wire, whose connections read INFO for the restart
// quarantine before anything is written on them. Everything else goes through
// go-redis (fanout).

// The scripts of the hot commands, for the wire transport.
var (
	releaseW     = wire.NewScript(releaseLua)
	extendW      = wire.NewScript(extendLua)
	fairAcquireW = wire.NewScript(fairAcquireLua)
)

// newPipes returns the wire transport over masters (in the nodes' order).
func (m *Manager) newPipes(masters []wire.Master) *wire.Pipes {
	cfg := wire.Config{Timeout: m.cfg.nodeTimeout, Observe: m.wireEvent, Submitted: m.cfg.submitted}
	if m.cfg.quarantine > 0 {
		cfg.ReadReplication = true
		cfg.OnInfo = func(i int, server, repl string) {
			n := m.nodes[i]
			m.quarantined(n, n.observe(server, repl, m.cfg.clock.Now(), m.cfg.quarantine))
		}
		cfg.InfoError = func(i int, what string, err error) error { return m.nodes[i].infoFailed(what, err) }
	}
	return wire.New(masters, cfg)
}

// wireEvent reports a connection's event to the Observer.
func (m *Manager) wireEvent(e wire.Event) {
	if m.cfg.observer == nil {
		return
	}
	ev := observe.Event{Master: m.nodes[e.Master].name, Err: e.Err}
	switch e.Kind {
	case wire.EventDropped:
		ev.Kind = observe.EventConnDropped
	case wire.EventLateReply:
		ev.Kind = observe.EventLateReply
	default:
		return
	}
	m.cfg.observer.Observe(ev)
}

// errManagerClosed is the result of commands sent after, or in flight at, Close.
var errManagerClosed = errors.New("manager closed")

// decoder maps one master's reply to a hot command to an outcome; for a SET NX
// GET that found the key held, holder is the value there.
type decoder func(r *wire.Result) (out Outcome, holder string, err error)

// call is the memory of one hot round, reused: its command, the command's keys
// and arguments, and the masters' results. A Rounder keeps no reference to them
// once Round has returned.
type call struct {
	cmd  wire.Cmd
	keys [2]string
	args [6]string
	res  []wire.Result
}

func (m *Manager) getCall() *call {
	select {
	case c := <-m.calls:
		return c
	default:
	}
	return &call{res: make([]wire.Result, len(m.nodes))}
}

func (m *Manager) putCall(c *call) {
	c.cmd = wire.Cmd{}
	clear(c.keys[:])
	clear(c.args[:])
	clear(c.res)
	select {
	case m.calls <- c:
	default:
	}
}

// send runs c's command on every master as one round and returns the report, in
// declared order; c goes back to the pool. Each master's command ends within the
// node timeout (or ctx's deadline when sooner); a cancellation of ctx ends the
// round at once.
func (m *Manager) send(ctx context.Context, op, key string, c *call, decode decoder) *Report {
	return m.sendTo(ctx, m.newReport(op, key), c, decode)
}

// sendTo is send, filling rep (an empty report of the round: newReport,
// newLockReport).
func (m *Manager) sendTo(ctx context.Context, rep *Report, c *call, decode decoder) *Report {
	var t0 time.Time
	if tracing {
		t0 = time.Now()
	}
	m.tr.Round(ctx, &c.cmd, c.res)
	for i, n := range m.nodes {
		r := &c.res[i]
		nr := NodeResult{Node: n.name, Outcome: OutcomeError, Latency: r.Latency}
		var err error
		if r.Type == 0 {
			switch err = r.Err; {
			case err == nil:
				err = wire.ErrNoReply
			case errors.Is(err, wire.ErrClosed):
				err = errManagerClosed
			}
		} else {
			nr.Outcome, nr.holder, err = decode(r)
		}
		if err != nil {
			nr.Outcome, nr.Err = OutcomeError, n.explain(err)
		}
		rep.Nodes[i] = nr
	}
	rep.Votes = rep.count(OutcomeOK)
	if tracing {
		traceRound(rep, c.res, t0, time.Now())
	}
	m.putCall(c)
	m.observeRound(rep)
	return rep
}

// reportOf5 is a Report and the node results of up to five masters in one
// allocation.
type reportOf5 struct {
	rep   Report
	nodes [5]NodeResult
}

// newReport returns an empty report of a round over every master.
func (m *Manager) newReport(op, key string) *Report {
	if len(m.nodes) <= len(reportOf5{}.nodes) {
		r := &reportOf5{}
		return m.emptyReport(r, op, key)
	}
	return &Report{Op: op, Key: key, Quorum: m.quorum, Nodes: make([]NodeResult, len(m.nodes))}
}

// emptyReport makes r an empty report of a round over every master (up to five)
// and returns it.
func (m *Manager) emptyReport(r *reportOf5, op, key string) *Report {
	r.rep = Report{Op: op, Key: key, Quorum: m.quorum, Nodes: r.nodes[:len(m.nodes):len(m.nodes)]}
	return &r.rep
}

// lockOf5 is a Lock, the node results of the acquisition round that made it
// (Votes), and the report of its release, over up to five masters: one
// allocation for the three.
type lockOf5 struct {
	Lock
	acquire, release reportOf5
}

// newLockReport returns a Lock to fill and an empty report of an acquisition
// round of key, in one allocation when there are at most five masters: the Lock
// keeps the report's node results when the round makes it (Votes), and the room
// for its release's report (releaseReport). The caller keeps releaseTo when it
// fills the Lock.
func (m *Manager) newLockReport(key string) (*Lock, *Report) {
	if len(m.nodes) > len(reportOf5{}.nodes) {
		return new(Lock), m.newReport(opAcquire, key)
	}
	lo := &lockOf5{}
	lo.releaseTo = &lo.release
	return &lo.Lock, m.emptyReport(&lo.acquire, opAcquire, key)
}

// releaseReport returns an empty report of l's release round: the room made for
// it with the Lock (newLockReport) when there is one, else a new one. Only the
// Release that released l calls it, once.
func (l *Lock) releaseReport() *Report {
	if r := l.releaseTo; r != nil && len(l.m.nodes) <= len(r.nodes) {
		l.releaseTo = nil
		return l.m.emptyReport(r, opRelease, l.key)
	}
	return l.m.newReport(opRelease, l.key)
}

// setRound sends SET key value NX PX ms (SET NX GET where the master takes it).
func (m *Manager) setRound(ctx context.Context, key, value string, ms int64) *Report {
	return m.setRoundTo(ctx, m.newReport(opAcquire, key), key, value, ms, true)
}

// setRoundTo sends SET key value NX PX ms, as SET NX GET where the master takes
// it when holder is set (NodeResult.holder is then the value that kept us out),
// filling rep (newLockReport).
func (m *Manager) setRoundTo(ctx context.Context, rep *Report, key, value string, ms int64, holder bool) *Report {
	c := m.getCall()
	c.args = [6]string{"SET", key, value, "NX", "PX", strconv.FormatInt(ms, 10)}
	c.cmd = wire.Cmd{Args: c.args[:], Want: "+$", NXGet: holder}
	m.atQuorum(c, m.votes.set)
	return m.sendTo(ctx, rep, c, decodeSet)
}

// decodeSet reads SET NX's reply: +OK (or nil, as SET NX GET) when it set the key.
func decodeSet(r *wire.Result) (Outcome, string, error) {
	switch {
	case r.Type == '-' && r.NXGet && strings.HasPrefix(r.Str, "WRONGTYPE"):
		// GET cannot read a key of another type; like plain SET NX, it was not set.
		return OutcomeForeign, "", nil
	case r.Type == '-':
		return OutcomeError, "", replyErr(r)
	case r.NXGet && r.Type == '$' && r.Int == -1:
		return OutcomeOK, "", nil
	case r.NXGet && r.Type == '$':
		return OutcomeForeign, r.Str, nil
	case r.Type == '+' && r.Str == "OK":
		return OutcomeOK, "", nil
	case r.Type == '$' && r.Int == -1:
		return OutcomeForeign, "", nil
	}
	return OutcomeError, "", replyErr(r)
}

// scriptRound runs a script of the hot path whose reply is an integer, over the
// first nk keys and na arguments of c.
func (m *Manager) scriptRound(ctx context.Context, op, key string, s *wire.Script, c *call, nk, na int, decode decoder) *Report {
	return m.scriptRoundTo(ctx, m.newReport(op, key), s, c, nk, na, decode)
}

// scriptRoundTo is scriptRound, filling rep.
func (m *Manager) scriptRoundTo(ctx context.Context, rep *Report, s *wire.Script, c *call, nk, na int, decode decoder) *Report {
	c.cmd = wire.Cmd{Script: s, Keys: c.keys[:nk], Args: c.args[:na], Want: ":"}
	return m.sendTo(ctx, rep, c, decode)
}

// releaseRoundTo runs release.lua in its short form, a plain lock's release:
// compare-and-delete of value at rep.Key, waking the waiters of the key's queue
// key and wake-up channel (key+queueSuffix and wakeChannel(key), which the script
// names itself), filling rep.
func (m *Manager) releaseRoundTo(ctx context.Context, rep *Report, value string) *Report {
	c := m.getCall()
	c.keys[0] = rep.Key
	c.args[0] = value
	return m.scriptRoundTo(ctx, rep, releaseW, c, 1, 1, decodeInt)
}

// extendRound runs extend.lua: the TTL of value's key to ms where it is ours.
func (m *Manager) extendRound(ctx context.Context, op, key, value string, ms int64) *Report {
	c := m.getCall()
	c.keys[0] = key
	c.args[0], c.args[1] = value, strconv.FormatInt(ms, 10)
	return m.scriptRound(ctx, op, key, extendW, c, 1, 2, decodeExtend)
}

// extendRevoked is extend.lua's reply where the key holds our value's tombstone.
const extendRevoked = -2

// decodeExtend reads extend.lua's reply. A WRONGTYPE error (the script's GET met
// a key of another type: another client replaced the lock) means the key is not
// ours: OutcomeForeign, so that a majority of such keys is ErrLost, not a master
// down. (A release keeps the per-master ErrWrongType: nothing of ours is there.)
func decodeExtend(r *wire.Result) (Outcome, string, error) {
	switch {
	case r.Type == '-' && strings.HasPrefix(r.Str, "WRONGTYPE"):
		return OutcomeForeign, "", nil
	case r.Type == ':' && r.Int == extendRevoked:
		// Our value's tombstone: the holder is the revocation.
		return OutcomeForeign, tombstonePrefix, nil
	}
	return decodeInt(r)
}

// decodeInt reads a script's integer reply as release.lua and extend.lua give it.
func decodeInt(r *wire.Result) (Outcome, string, error) {
	if r.Type == ':' {
		return outcomeOf(r.Int), "", nil
	}
	return OutcomeError, "", replyErr(r)
}

// replyErr is the error of a reply a decoder does not take: the master's error
// reply, or a reply of another type.
func replyErr(r *wire.Result) error {
	if r.Err != nil {
		return r.Err
	}
	return fmt.Errorf("%w %q", wire.ErrProtocol, r.Type)
}

// decodeFair reads fair_acquire.lua's reply: 1 acquired; 0 the key is held by an
// exclusive holder, -2 another waiter is ahead (holder fairHeld); -3 it is held by
// shared holders (holder unknown).
func decodeFair(r *wire.Result) (Outcome, string, error) {
	switch {
	case r.Type != ':':
		return OutcomeError, "", replyErr(r)
	case r.Int == replyOurs:
		return OutcomeOK, "", nil
	case r.Int == replyFairShared:
		return OutcomeForeign, "", nil
	}
	return OutcomeForeign, fairHeld, nil
}

// fairRound runs fair_acquire.lua for w on every master as one round.
func (m *Manager) fairRound(ctx context.Context, key, value string, ms int64, w *fairWaiter) *Report {
	return m.fairRoundTo(ctx, m.newReport(opAcquire, key), key, value, ms, w)
}

// fairRoundTo is fairRound, filling rep (newLockReport).
func (m *Manager) fairRoundTo(ctx context.Context, rep *Report, key, value string, ms int64, w *fairWaiter) *Report {
	c := m.getCall()
	c.keys[0], c.keys[1] = key, key+queueSuffix
	c.args = [6]string{value, strconv.FormatInt(ms, 10), w.id, w.score, w.hbMS, w.mode}
	c.cmd = wire.Cmd{Script: fairAcquireW, Keys: c.keys[:2], Args: c.args[:6], Want: ":"}
	m.atQuorum(c, m.votes.fair)
	return m.sendTo(ctx, rep, c, decodeFair)
}

// infoFailed returns the error of an INFO the quarantine needs (what names the
// command). Only a permission error (a NOPERM reply: an ACL without +info) is
// advice that holds until the next good handshake: it is recorded, and appended to
// the master's later errors. Any other failure (a timeout on a paused master, a
// reset, EOF, a peer that is not Redis) says what happened and is not kept.
func (n *node) infoFailed(what string, err error) error {
	if !isNoPerm(err) {
		return fmt.Errorf("restart quarantine: %s: %w", what, err)
	}
	err = fmt.Errorf("restart quarantine needs INFO server and INFO replication (grant +info, or turn restart_quarantine off): %w", err)
	n.mu.Lock()
	n.connectErr = err
	n.mu.Unlock()
	return err
}

// isNoPerm reports whether err is a master's NOPERM error reply, from the wire
// path or from go-redis.
func isNoPerm(err error) bool {
	var re wire.ErrorReply
	if errors.As(err, &re) {
		return strings.HasPrefix(string(re), "NOPERM")
	}
	return redis.IsPermissionError(err)
}
