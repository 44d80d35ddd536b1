package quorum

import (
	"context"
	"strings"
	"sync"

	"github.com/redlock/redlock/internal/keyspace"
	"github.com/redlock/redlock/internal/wire"
)

// Lock.Verify's reads. Each is one plain read command sent to every master as
// one round of the transport, never a script: a master whose writes are paused
// (CLIENT PAUSE WRITE, a FAILOVER) holds scripts back and answers reads. They
// are the commands the loss watch and the documented ACL's lock user already
// read with (GET, ZSCORE), nothing more. A hold with several reads (a
// multi-name lock's names, a shared holder's member and its tombstone) sends
// them as concurrent rounds, which the transport writes together. They go
// through pipes of their own (Manager.reads), so that a read never waits on a
// connection behind a write that a master holds back.

// verifyRead is one read of Lock.Verify: its command, and what a master's
// reply to it says of the lock (decode). A read that only tells a revocation
// (revocation) gives no outcome of its own.
type verifyRead struct {
	args       []string
	decode     func(l *Lock, r *wire.Result) (out Outcome, revoked bool, err error)
	revocation bool
}

// verifier is a primitive whose keys Lock.Verify reads its own way; any other
// lock's is one GET of its key.
type verifier interface {
	verifyReads(l *Lock) []verifyRead
}

// verifyReads returns the reads of l's Verify.
func (l *Lock) verifyReads() []verifyRead {
	if v, ok := l.prim.(verifier); ok {
		return v.verifyReads(l)
	}
	return []verifyRead{getRead(l.key)}
}

// getRead reads a key that holds the lock's value (GET).
func getRead(key string) verifyRead {
	return verifyRead{args: []string{"GET", key}, decode: decodeValue}
}

// decodeValue says what a master's GET reply holds of l: its value, none
// (missing), or another holder's (another value, or a key of another type,
// as for an extension); revoked when it is l's tombstone.
func decodeValue(l *Lock, r *wire.Result) (Outcome, bool, error) {
	if out, _, err := decodeMember(l, r); out != OutcomeOK || err != nil {
		return out, false, err
	}
	if r.Str != l.value {
		return OutcomeForeign, isTombstoneOf(r.Str, l.value), nil
	}
	return OutcomeOK, false, nil
}

// sharedReads reads a shared holder's member and its tombstone (ZSCORE each).
func sharedReads(l *Lock) []verifyRead {
	return []verifyRead{
		{args: []string{"ZSCORE", l.key, l.value}, decode: decodeMember},
		{args: []string{"ZSCORE", l.key, keyspace.Tombstone(l.value)}, decode: decodeTombstone, revocation: true},
	}
}

// decodeMember says whether a master's ZSCORE reply shows l's member among the
// shared holders (or a GET reply a value: decodeValue); a key of another type
// is another holder's.
func decodeMember(_ *Lock, r *wire.Result) (Outcome, bool, error) {
	switch {
	case r.Type == '-' && strings.HasPrefix(r.Str, "WRONGTYPE"):
		return OutcomeForeign, false, nil
	case r.Type == '-':
		return OutcomeError, false, r.Err
	case r.Int < 0:
		return OutcomeMissing, false, nil
	}
	return OutcomeOK, false, nil
}

// decodeTombstone says whether a master's ZSCORE reply shows l's tombstone.
func decodeTombstone(_ *Lock, r *wire.Result) (Outcome, bool, error) {
	return OutcomeOK, r.Type == '$' && r.Int >= 0, nil
}

// verifyRounds sends l's reads, each as one round on every master (at once
// when there are several), and returns one report of what each master holds
// of l, and per master whether it holds l's tombstone. A master holds l when
// every read says so; one read showing it missing or another holder's decides
// for that master whatever the other reads say (it does not hold every key);
// else a read that failed makes it OutcomeError. The rounds are not observed.
func (l *Lock) verifyRounds(ctx context.Context, reads []verifyRead) (*Report, []bool) {
	reps := make([]*Report, len(reads))
	tombs := make([][]bool, len(reads))
	run := func(j int) {
		rd := reads[j]
		tombs[j] = make([]bool, len(l.m.nodes))
		reps[j] = l.m.roundEach(ctx, l.m.reads, opVerify, l.key, nil, "$-", nil, nil, func(i int, r *wire.Result) (Outcome, error) {
			out, tomb, err := rd.decode(l, r)
			tombs[j][i] = tomb
			return out, err
		}, rd.args...)
	}
	if len(reads) == 1 { // a plain lock's GET: its round is the report
		run(0)
		return reps[0], tombs[0]
	}
	var wg sync.WaitGroup
	for j := range reads {
		wg.Go(func() { run(j) })
	}
	wg.Wait()
	rep := &Report{Op: opVerify, Key: l.key, Quorum: l.m.quorum, Nodes: make([]NodeResult, len(l.m.nodes))}
	revoked := make([]bool, len(l.m.nodes))
	for i := range rep.Nodes {
		nr := &rep.Nodes[i]
		nr.Outcome = OutcomeOK
		for j, rd := range reads {
			r := reps[j].Nodes[i]
			nr.Node, nr.Latency = r.Node, max(nr.Latency, r.Latency)
			revoked[i] = revoked[i] || tombs[j][i]
			if rd.revocation {
				continue
			}
			switch {
			case r.Outcome == OutcomeForeign || r.Outcome == OutcomeMissing:
				if nr.Outcome != OutcomeForeign {
					nr.Outcome, nr.Err = r.Outcome, nil
				}
			case r.Outcome != OutcomeOK && nr.Outcome == OutcomeOK:
				nr.Outcome, nr.Err = r.Outcome, r.Err
			}
		}
		revoked[i] = revoked[i] && nr.Outcome != OutcomeOK
	}
	rep.Votes = rep.count(OutcomeOK)
	return rep, revoked
}
