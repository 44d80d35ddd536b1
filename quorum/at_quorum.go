package quorum

import (
	"context"
	"errors"
	"os"

	"github.com/redlock/redlock/internal/wire"
)

// Acquisition rounds end once decided. A master that does not answer (stopped,
// blackholed, swapping) used to cost every round the whole node timeout, though a
// quorum of the others had granted long before: every acquisition and every fair
// handoff took at least the node timeout while one master of five hung. An
// acquisition round now waits for the other masters, once a quorum has granted or
// so many refused that no quorum can grant, twice as long as that decision took
// (5 ms at least; wire.Cmd.Granted); then a master from which nothing at all was
// read meanwhile (stopped, cut off) is reported as failed with wire.ErrNotAwaited
// (a master error in the report, the observer's events and the metrics, as a
// timeout is), while one still answering (slow, busy) is waited for up to the node
// timeout as before. That changes nothing the lock relies on: the validity counts
// from the round's start as before, and a command the round stopped waiting for
// may still set the key on its master, as one that timed out may; the lock's
// release and extension go to every master, and what they do not reach expires
// with the TTL. A round refused by a quorum fails whatever the others answer; its
// clean-up (cleanUp) goes to the masters that did not answer as to those that
// timed out, in the background. A round still undecided without the masters that
// do not answer runs to its end as before. A master in its restart quarantine
// counts as no grant here either (score turns its vote down the same way).

// votes are the rounds' wire.Cmd.Granted functions, made once per Manager (a
// func value made per round would cost an allocation).
type votes struct {
	set, fair, wait func(int, *wire.Result) bool
}

func (m *Manager) newVotes() votes {
	return votes{set: m.voteOf(decodeSet), fair: m.voteOf(decodeFair), wait: m.voteOf(decodeWaitRound)}
}

// voteOf returns a wire.Cmd.Granted for a round whose replies decode reads: a
// reply read as OutcomeOK from a master outside its restart quarantine.
func (m *Manager) voteOf(decode decoder) func(int, *wire.Result) bool {
	return func(i int, r *wire.Result) bool {
		o, _, err := decode(r)
		if err != nil || o != OutcomeOK || i >= len(m.nodes) {
			return false
		}
		return m.cfg.quarantine <= 0 || m.nodes[i].quarantinedUntil(m.cfg.clock.Now()).IsZero()
	}
}

// atQuorum makes c's round end at a quorum of the replies granted approves.
func (m *Manager) atQuorum(c *call, granted func(int, *wire.Result) bool) {
	c.cmd.Granted, c.cmd.Quorum = granted, m.quorum
}

// cleanUp runs the clean-up of a failed acquisition round rep, run(ctx, only), on
// the masters where the round may have taken effect (may): at once on the masters
// that answered the round, and in the background on those that gave no reply to it
// (not awaited once the round was decided, or timed out), so that the caller does
// not wait for such a master once more: its clean-up sits behind the round's
// unanswered command on the master's connection. A clean-up that reaches a master
// late is harmless: every round writes a value of its own (acquisition.begin), and
// a clean-up acts only where the key holds its round's value. Close lets the
// background part go on for cleanUpGrace at most, then ends it; a master that the
// clean-up does not reach keeps the round's key, if its command set it there,
// until the TTL, as after a timeout. track, when set, is called for the
// background part before it starts, and its done when that part ends (or never
// starts: the Manager closed).
func (m *Manager) cleanUp(ctx context.Context, rep *Report, may func(NodeResult) bool, track func() (done func()), run func(ctx context.Context, only []bool)) {
	var now, later []bool
	for i, nr := range rep.Nodes {
		if !may(nr) {
			continue
		}
		target := &now
		if errors.Is(nr.Err, os.ErrDeadlineExceeded) { // wire.ErrNotAwaited, wire.ErrNoReply
			target = &later
		}
		if *target == nil {
			*target = make([]bool, len(m.nodes))
		}
		(*target)[i] = true
	}
	if later != nil {
		done := func() {}
		if track != nil {
			done = track()
		}
		if !m.background(func() {
			defer done()
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			defer context.AfterFunc(m.life, cancel)()
			run(ctx, later)
		}) {
			done()
		}
	}
	if now != nil {
		run(ctx, now)
	}
}

// notRefused is cleanUp's may for the acquisition rounds: a master that refused
// the round (OutcomeForeign: the key held, another waiter ahead) ran it and set
// nothing, so there is nothing to undo; every other may have set the key.
func notRefused(nr NodeResult) bool { return nr.Outcome != OutcomeForeign }
