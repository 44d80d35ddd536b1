package quorum

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redlock/redlock/internal/wire"
)

// A permit resumed from its token: the token says which semaphore and how many
// permits, not which slot. One read round (sem_find.lua, a script so that the
// lock user's ACL needs nothing more, docs/acl.md) finds the slots that hold the
// token on every master; the slot that most masters show is the permit, and the
// extension or release is one round on that slot. A slot that
// holds another value is somebody else's permit: it never makes ours "lost".

const opFindPermit = "find-permit"

// findPermit reads every slot of l's semaphore on every master and points l (its
// key, p.slot) at the slot that holds l's value on the most masters, the lowest on
// a tie. It returns the read's report for that slot: OutcomeOK where the slot holds
// the value, OutcomeMissing elsewhere (the slots holding other values are not
// ours, so never OutcomeForeign). When no master shows the value, p.slot stays -1
// and the report is every master's OutcomeMissing or OutcomeError.
func (m *Manager) findPermit(ctx context.Context, l *Lock, p *permitLock) *Report {
	slots := p.slotKeys()
	held := make([][]int, len(m.nodes)) // per master, the slots holding the value
	rep := m.scriptEach(ctx, opFindPermit, p.base, semFindScript, "*", nil, slots, func(i int, r *wire.Result) (Outcome, error) {
		var mine []int
		for _, e := range r.Array {
			if e.Type != ':' {
				return OutcomeError, fmt.Errorf("%w: a slot's index of type %q", wire.ErrProtocol, e.Type)
			}
			if e.Int >= 0 && e.Int < int64(p.n) {
				mine = append(mine, int(e.Int))
			}
		}
		held[i] = mine
		return OutcomeMissing, nil
	}, l.value)
	votes := make([]int, p.n)
	best := -1
	for _, mine := range held {
		for _, s := range mine {
			votes[s]++
			if best < 0 || votes[s] > votes[best] || votes[s] == votes[best] && s < best {
				best = s
			}
		}
	}
	p.slot = best
	p.strays = p.strays[:0]
	for s, v := range votes {
		if v > 0 && s != best {
			p.strays = append(p.strays, slots[s])
		}
	}
	if best < 0 {
		return rep
	}
	l.key, rep.Key = slots[best], slots[best]
	for i, mine := range held {
		for _, s := range mine {
			if s == best {
				rep.Nodes[i].Outcome = OutcomeOK
			}
		}
	}
	rep.Votes = rep.count(OutcomeOK)
	return rep
}

// releasePermitToken releases the permit that l's value holds (findPermit) and,
// on every master, every other slot where a read showed the value (a leftover of
// a failed round). Where the permit was deleted it tells the holder's loss watch,
// which listens on the slot's channel, besides waking the semaphore's waiters.
// Nothing found is a report of OutcomeMissing: released already.
func (m *Manager) releasePermitToken(ctx context.Context, l *Lock, p *permitLock) *Report {
	rep := m.findPermit(ctx, l, p)
	if len(p.strays) > 0 {
		m.scriptOnAll(ctx, opRelease, p.base, multiReleaseScript, p.strays, released, l.value, "0")
	}
	if p.slot < 0 {
		return rep
	}
	rep = l.releaseRound(ctx)
	m.announceLoss(ctx, rep, l.key, l.key)
	return rep
}

// announceLoss publishes msg on key's wake-up channel on every master where rep
// (a release or a force-expire of key) deleted it, for the loss watch of its
// holder (WithLossWatch listens on that channel) when the round itself published
// only on the primitive's channel, or nowhere. A hint: a message lost only delays
// the holder's discovery to its next extension.
func (m *Manager) announceLoss(ctx context.Context, rep *Report, key, msg string) {
	if rep == nil || rep.count(OutcomeOK) == 0 {
		return
	}
	deleted := make([]bool, len(rep.Nodes))
	for i, nr := range rep.Nodes {
		deleted[i] = nr.Outcome == OutcomeOK
	}
	ctx = backgroundFor(ctx) // the deletion is done: its news goes out
	m.scriptEach(ctx, "announce", key, nil, ":", deleted, nil, func(int, *wire.Result) (Outcome, error) {
		return OutcomeOK, nil
	}, "PUBLISH", wakeChannel(key), msg)
}

// slotKeys returns the keys of the semaphore's slots, NAME:permit:0 .. N-1.
func (p *permitLock) slotKeys() []string {
	keys := make([]string, p.n)
	for i := range keys {
		keys[i] = p.base + ":" + strconv.Itoa(i)
	}
	return keys
}
