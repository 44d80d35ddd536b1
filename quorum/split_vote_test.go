package quorum

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// setCalls returns how many SET commands a master has run.
func setCalls(t *testing.T, sv *redistest.Server) int {
	t.Helper()
	info, err := sv.Client().Info(context.Background(), "commandstats").Result()
	require.NoError(t, err)
	v := infoField(info, "cmdstat_set")
	if v == "" {
		return 0
	}
	calls, _, _ := strings.Cut(strings.TrimPrefix(v, "calls="), ",")
	n, err := strconv.Atoi(calls)
	require.NoError(t, err)
	return n
}

// Bug 5: "some votes but no quorum" was read as a split vote even when another
// owner held a bare majority, so the retry delay dropped to a millisecond and a
// waiter hammered the masters.
func TestBug5SplitVoteShortcutDoesNotSpinAgainstBareMajority(t *testing.T) {
	c, m := testCluster(t, 5, WithRetry(1000, 100*time.Millisecond, 0))
	ctx := context.Background()
	for _, sv := range c.Servers[:3] {
		require.NoError(t, sv.Client().Set(ctx, m.Key("review/5"), "rl1.holder", time.Minute).Err())
	}
	before := setCalls(t, c.Servers[4])
	wctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_, err := m.Acquire(wctx, "review/5", time.Second)
	require.ErrorIs(t, err, ErrNotAcquired)
	rounds := setCalls(t, c.Servers[4]) - before
	t.Logf("%d rounds in 1s with a 100ms retry delay", rounds)
	assert.LessOrEqual(t, rounds, 15, "the policy allows about 10 rounds")
}

// A true split vote (our value on 2 of 5, two others on 2 and 1) is still retried
// soon, and never twice in a row.
func TestSplitVoteIsRecognisedOnlyWhenNoValueCanHoldAQuorum(t *testing.T) {
	res := func(outs ...any) *RoundError {
		rep := Report{Op: opAcquire, Quorum: 3}
		for i := 0; i < len(outs); i += 2 {
			rep.Nodes = append(rep.Nodes, NodeResult{Outcome: outs[i].(Outcome), holder: outs[i+1].(string)})
		}
		rep.Votes = rep.count(OutcomeOK)
		return &RoundError{Report: rep, Kind: ErrHeld}
	}
	ok, fo, er := OutcomeOK, OutcomeForeign, OutcomeError
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"three contenders", res(ok, "", ok, "", fo, "x", fo, "x", fo, "y"), true},
		{"another value on a bare majority", res(ok, "", ok, "", fo, "x", fo, "x", fo, "x"), false},
		{"unknown values may be one holder's", res(ok, "", ok, "", fo, "", fo, "", fo, ""), false},
		{"a master down may hold the other value", res(ok, "", ok, "", fo, "x", fo, "x", er, ""), false},
		{"no vote at all", res(fo, "x", fo, "x", fo, "y", fo, "y", fo, "z"), false},
		{"not a round error", ErrHeld, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, splitVote(tt.err)) })
	}
}

// SET NX GET tells whose value holds the key where ours was not set, on the wire
// fast path (Redis >= 7); the go-redis path leaves it unknown.
func TestSetNXGetLearnsTheHolder(t *testing.T) {
	c, m := testCluster(t, 3)
	ctx := context.Background()
	require.NoError(t, c.Servers[1].Client().Set(ctx, "lock:learn", "rl1.theirs", time.Minute).Err())
	rep := m.wireRound(ctx, opAcquire, "lock:learn", wireSet, "rl1.ours", "", 60000)
	assert.Equal(t, []Outcome{OutcomeOK, OutcomeForeign, OutcomeOK}, outcomes(rep))
	assert.Equal(t, "rl1.theirs", rep.Nodes[1].holder)
	assert.Empty(t, rep.Nodes[0].holder)
	assert.Equal(t, "rl1.ours", c.Servers[0].Client().Get(ctx, "lock:learn").Val())
	assert.Equal(t, "rl1.theirs", c.Servers[1].Client().Get(ctx, "lock:learn").Val(), "not overwritten")
}
