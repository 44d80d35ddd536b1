package wire_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/internal/wire"
)

// arrayScript marks the master it ran on and answers a nested array with an
// error reply inside.
var arrayScript = wire.NewScript(`redis.call('SET', KEYS[1], ARGV[1])
return {ARGV[1], 7, {redis.error_reply('ERR inner'), false}, {}}`)

// TestRoundArrayReplies: a script answering an array, through the pipelined
// rounds, on the masters a Cmd's Only names and on none other; its script cache
// flushed between two rounds (EVAL after NOSCRIPT); one master paused (no reply
// within the node timeout, the others answer); a cancelled context.
func TestRoundArrayReplies(t *testing.T) {
	c := redistest.Start(t, 3, redistest.Options{})
	masters := make([]wire.Master, len(c.Servers))
	for i, s := range c.Servers {
		masters[i] = wire.Master{Addr: s.Addr()}
	}
	const timeout = 300 * time.Millisecond
	ps := wire.New(masters, wire.Config{Timeout: timeout})
	t.Cleanup(func() { _ = ps.Close() })
	ctx := context.Background()
	want := func(v string) wire.Result {
		return wire.Result{Type: '*', Int: 4, Array: []wire.Result{
			{Type: '$', Str: v, Int: int64(len(v))},
			{Type: ':', Int: 7},
			{Type: '*', Int: 2, Array: []wire.Result{{Type: '-', Str: "ERR inner", Err: wire.ErrorReply("ERR inner")}, {Type: '$', Int: -1}}},
			{Type: '*', Array: []wire.Result{}},
		}}
	}
	run := func(ctx context.Context, v string, only []bool) []wire.Result {
		out := make([]wire.Result, len(masters))
		ps.Round(ctx, &wire.Cmd{Script: arrayScript, Keys: []string{"ran"}, Args: []string{v}, Want: "*", Only: only}, out)
		for i := range out {
			out[i].Latency = 0
		}
		return out
	}
	t.Run("only", func(t *testing.T) {
		out := run(ctx, "a", []bool{true, false, true})
		assert.Equal(t, want("a"), out[0])
		assert.ErrorIs(t, out[1].Err, wire.ErrNotAsked)
		assert.Equal(t, want("a"), out[2])
		for i, s := range c.Servers {
			n, err := s.Client().Exists(ctx, "ran").Result()
			require.NoError(t, err)
			assert.Equal(t, int64(map[bool]int{true: 1}[i != 1]), n, "master %d", i)
		}
		out = run(ctx, "none", []bool{false, false, false})
		for _, r := range out {
			assert.ErrorIs(t, r.Err, wire.ErrNotAsked)
		}
	})
	t.Run("script flushed between rounds", func(t *testing.T) {
		for round, v := range []string{"b", "c", "d"} {
			for _, s := range c.Servers {
				require.NoError(t, s.Client().ScriptFlush(ctx).Err())
			}
			for i, r := range run(ctx, v, nil) {
				assert.Equal(t, want(v), r, "round %d, master %d", round, i)
			}
		}
	})
	t.Run("a master paused", func(t *testing.T) {
		c.Servers[1].Stop()
		t0 := time.Now()
		out := run(ctx, "e", nil)
		c.Servers[1].Cont()
		assert.Less(t, time.Since(t0), 5*timeout, "the round ends with the node timeout")
		assert.Equal(t, want("e"), out[0])
		assert.ErrorIs(t, out[1].Err, wire.ErrNoReply)
		assert.Equal(t, want("e"), out[2])
		require.Eventually(t, func() bool { return run(ctx, "f", nil)[1].Err == nil }, 10*time.Second, 50*time.Millisecond, "the master answers again once resumed")
	})
	t.Run("cancelled", func(t *testing.T) {
		c.Servers[0].Stop()
		defer c.Servers[0].Cont()
		cctx, cancel := context.WithCancelCause(ctx)
		cause := errors.New("caller gave up")
		time.AfterFunc(20*time.Millisecond, func() { cancel(cause) })
		out := run(cctx, "g", nil)
		assert.ErrorIs(t, out[0].Err, cause)
	})
}
