package quorum

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redlock/redlock/internal/wire"
)

// sharedMembers reads the members of a shared key on every master, each
// master's clock read in the same call (shared_members.lua: TIME, ZRANGE and PTTL):
// per master in declared order, each member's time left by that master's clock,
// at most the key's TTL there (nil where the master failed). sent is when the
// read started, which every master's clock reads later. The error is the round's when fewer than a
// quorum answered. admin.Admin.Primitives makes the shared holders of it.
func (m *Manager) sharedMembers(ctx context.Context, key string) (sent time.Time, remaining []map[string]time.Duration, err error) {
	remaining = make([]map[string]time.Duration, len(m.nodes))
	sent = time.Now()
	rep := m.scriptEach(ctx, "shared-read", key, sharedMembersScript, "*", nil, []string{key}, func(i int, r *wire.Result) (Outcome, error) {
		left, err := membersLeft(r)
		remaining[i] = left
		return OutcomeOK, err
	})
	if rep.count(OutcomeOK) < m.quorum {
		return sent, remaining, m.roundError(rep)
	}
	return sent, remaining, nil
}

// membersLeft reads shared_members.lua's reply: each member's time left by the
// master's clock, at most the key's TTL there. A member longer than the
// transport keeps (1 MiB) or a score that is not a number fails the read.
func membersLeft(r *wire.Result) (map[string]time.Duration, error) {
	a := r.Array
	if len(a) < 3 || len(a)%2 == 0 {
		return nil, fmt.Errorf("%w: %d elements", wire.ErrProtocol, len(a))
	}
	sec, err1 := strconv.ParseInt(a[0].Str, 10, 64)
	usec, err2 := strconv.ParseInt(a[1].Str, 10, 64)
	if err := errors.Join(err1, err2); err != nil || a[2].Type != ':' {
		return nil, fmt.Errorf("%w: TIME or PTTL: %w", wire.ErrProtocol, err)
	}
	// No member outlives its key: a score (any writer's, of any size) counts
	// up to the key's TTL, in floating point so that none overflows.
	most := noExpiry
	if d := time.Duration(a[2].Int) * time.Millisecond; d > 0 {
		most = d
	}
	now := float64(sec*1000 + usec/1000)
	left := map[string]time.Duration{}
	for i := 3; i < len(a); i += 2 {
		member := &a[i]
		if member.Type != '$' || member.Int < 0 || int64(len(member.Str)) != member.Int {
			return nil, fmt.Errorf("a member of %d bytes, longer than the transport keeps", member.Int)
		}
		score, err := strconv.ParseFloat(a[i+1].Str, 64)
		if err != nil {
			return nil, fmt.Errorf("the score of a member: %w", err)
		}
		if ms := score - now; ms > 0 {
			left[member.Str] = most
			if ms < float64(most/time.Millisecond) {
				left[member.Str] = time.Duration(ms) * time.Millisecond
			}
		}
	}
	return left, nil
}
