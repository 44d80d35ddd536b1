package quorum

import "github.com/redlock/redlock/internal/wire"

// Acquisition rounds end at a quorum. A master that does not answer (stopped,
// blackholed, swapping) used to cost every round the whole node timeout, though a
// quorum of the others had granted long before: every acquisition and every fair
// handoff took at least the node timeout while one master of five hung. An
// acquisition round now waits for the other masters, once a quorum has granted,
// twice as long as the quorum took (5 ms at least; wire.Cmd.Granted); then a
// master from which nothing at all was read meanwhile (stopped, cut off) is
// reported as failed with wire.ErrNotAwaited (a master error in the report, the
// observer's events and the metrics, as a timeout is), while one still answering
// (slow, busy) is waited for up to the node timeout as before. That changes nothing the lock relies on: the validity
// counts from the round's start as before, and a command the round stopped
// waiting for may still set the key on its master, as one that timed out may;
// the lock's release and extension go to every master, and what they do not
// reach expires with the TTL. A round that no quorum grants runs to its end as
// before, so that its clean-up (unwind, the release of a split vote) knows every
// master's answer. A master in its restart quarantine counts as no grant here
// either (score turns its vote down the same way).

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
