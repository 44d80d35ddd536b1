package wire_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/faults"
	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/internal/wire"
)

// echoed is a Cmd.Granted that approves every ECHO reply.
func echoed(_ int, r *wire.Result) bool { return r.Type == '$' }

// refusedBy is a Cmd.Granted that approves the replies of masters i < n only.
func refusedBy(n int) func(int, *wire.Result) bool {
	return func(i int, r *wire.Result) bool { return i < n && r.Type == '$' }
}

// TestRoundEndsAtAQuorumBesideStoppedMasters: five masters, some stopped
// (SIGSTOP), a node timeout of 2 s. A round that ends at a quorum of three
// returns soon after the others answered while one or two masters are stopped,
// their results ErrNotAwaited, whether a quorum granted it or refused it; with
// three stopped no quorum answers, and the round waits for its deadline as one
// without Granted does; so does a round that the stopped master alone would
// decide (two grants, two refusals).
func TestRoundEndsAtAQuorumBesideStoppedMasters(t *testing.T) {
	const timeout = 2 * time.Second
	tests := []struct {
		name      string
		stopped   []int
		granted   func(int, *wire.Result) bool // nil: without Granted
		wantQuick bool
		wantErr   error // the stopped masters' results
	}{
		{"one stopped, at a quorum", []int{0}, echoed, true, wire.ErrNotAwaited},
		{"the last stopped, at a quorum", []int{4}, echoed, true, wire.ErrNotAwaited},
		{"two stopped, at a quorum", []int{1, 3}, echoed, true, wire.ErrNotAwaited},
		{"three stopped: no quorum", []int{0, 2, 4}, echoed, false, wire.ErrNoReply},
		{"one stopped, without Granted", []int{0}, nil, false, wire.ErrNoReply},
		{"one stopped, refused by a quorum", []int{4}, refusedBy(0), true, wire.ErrNotAwaited},
		{"one stopped, three refusals", []int{0}, refusedBy(2), true, wire.ErrNotAwaited},
		{"two stopped, refused by a quorum", []int{3, 4}, refusedBy(0), true, wire.ErrNotAwaited},
		{"one stopped, two grants and two refusals", []int{4}, refusedBy(2), false, wire.ErrNoReply},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := redistest.Start(t, 5, redistest.Options{})
			masters := make([]wire.Master, 5)
			for i, s := range c.Servers {
				masters[i] = wire.Master{Addr: s.Addr()}
			}
			ps := wire.New(masters, wire.Config{Timeout: timeout})
			t.Cleanup(func() { _ = ps.Close() })
			ctx := context.Background()
			out := make([]wire.Result, 5)
			cmd := &wire.Cmd{Args: []string{"ECHO", "warm"}, Want: "$"}
			ps.Round(ctx, cmd, out) // connections up before any master stops
			for i := range out {
				require.NoError(t, out[i].Err, "master %d", i)
			}
			for _, i := range tt.stopped {
				c.Servers[i].Stop()
			}
			cmd = &wire.Cmd{Args: []string{"ECHO", "x"}, Want: "$"}
			if tt.granted != nil {
				cmd.Granted, cmd.Quorum = tt.granted, 3
			}
			t0 := time.Now()
			ps.Round(ctx, cmd, out)
			took := time.Since(t0)
			for _, i := range tt.stopped {
				c.Servers[i].Cont()
			}
			t.Logf("the round took %v", took)
			if tt.wantQuick {
				assert.Less(t, took, timeout/4, "a quorum had decided")
			} else {
				assert.GreaterOrEqual(t, took, timeout, "undecided without the stopped masters")
			}
			for i := range out {
				if contains(tt.stopped, i) {
					assert.True(t, errors.Is(out[i].Err, tt.wantErr), "stopped master %d: %v", i, out[i].Err)
					continue
				}
				require.NoError(t, out[i].Err, "master %d", i)
				assert.Equal(t, "x", out[i].Str, "master %d", i)
			}
			// The resumed masters' late replies are thrown away, not taken for the
			// next command's.
			cmd = &wire.Cmd{Args: []string{"ECHO", "after"}, Want: "$"}
			require.Eventually(t, func() bool {
				ps.Round(ctx, cmd, out)
				for i := range out {
					if out[i].Err != nil {
						return false
					}
					require.Equal(t, "after", out[i].Str, "master %d", i)
				}
				return true
			}, 3*timeout, 10*time.Millisecond)
		})
	}
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestConcurrentRoundsEndAtAQuorumBesideAStoppedMaster: 16 goroutines make rounds
// while one master of five is stopped longer than the node timeout (its
// connection dropped as hung, and dialled again into the stopped master): every
// round returns well within the node timeout with a quorum of answers, and every
// reply read is the round's own. (Under this load a running master is sometimes
// slower than the others by more than the time a round gives it after the
// quorum: not awaited either.)
func TestConcurrentRoundsEndAtAQuorumBesideAStoppedMaster(t *testing.T) {
	const timeout = 500 * time.Millisecond
	c := redistest.Start(t, 5, redistest.Options{})
	masters := make([]wire.Master, 5)
	for i, s := range c.Servers {
		masters[i] = wire.Master{Addr: s.Addr()}
	}
	ps := wire.New(masters, wire.Config{Timeout: timeout})
	t.Cleanup(func() { _ = ps.Close() })
	ctx := context.Background()
	c.Servers[2].Stop()
	stopAt := time.Now()
	errs := make(chan error, 16)
	for g := range 16 {
		go func() {
			out := make([]wire.Result, 5)
			var err error
			for i := 0; time.Since(stopAt) < 3*timeout && err == nil; i++ {
				v := fmt.Sprintf("g%d.%d", g, i)
				t0 := time.Now()
				ps.Round(ctx, &wire.Cmd{Args: []string{"ECHO", v}, Want: "$", Granted: echoed, Quorum: 3}, out)
				if took := time.Since(t0); took > timeout/2 {
					err = fmt.Errorf("round %s took %v beside one stopped master", v, took)
				}
				ok := 0
				for m := range out {
					switch {
					case m == 2 && out[m].Err == nil:
						err = fmt.Errorf("round %s: the stopped master answered", v)
					case out[m].Err == nil && out[m].Str != v:
						err = fmt.Errorf("round %s: master %d answered %q", v, m, out[m].Str)
					case out[m].Err == nil:
						ok++
					case !errors.Is(out[m].Err, wire.ErrNotAwaited) && !errors.Is(out[m].Err, wire.ErrNoReply):
						// A running master slower than the others by more than the
						// time after the quorum is not awaited either.
						err = fmt.Errorf("round %s: master %d: %w", v, m, out[m].Err)
					}
				}
				if ok < 3 && err == nil {
					err = fmt.Errorf("round %s: %d answers", v, ok)
				}
			}
			errs <- err
		}()
	}
	for range 16 {
		require.NoError(t, <-errs)
	}
	c.Servers[2].Cont()
}

// TestRoundAwaitsADistantMasterAtItsPace: two masters of five 15 ms away (each
// way), three near. A round that ends at a quorum gets its quorum from the near
// ones in a millisecond, but waits for the distant ones, which answer at their
// usual pace (their last answer took as long): nothing is given up.
func TestRoundAwaitsADistantMasterAtItsPace(t *testing.T) {
	c := redistest.Start(t, 5, redistest.Options{})
	masters := make([]wire.Master, 5)
	for i, s := range c.Servers {
		masters[i] = wire.Master{Addr: s.Addr()}
		if i >= 3 {
			p := faults.NewProxy(t, s.Addr())
			p.SetLatency(15*time.Millisecond, 15*time.Millisecond)
			masters[i].Addr = p.Addr()
		}
	}
	ps := wire.New(masters, wire.Config{Timeout: time.Second})
	t.Cleanup(func() { _ = ps.Close() })
	ctx := context.Background()
	out := make([]wire.Result, 5)
	ps.Round(ctx, &wire.Cmd{Args: []string{"ECHO", "warm"}, Want: "$"}, out) // the distant ones' pace
	for i := range out {
		require.NoError(t, out[i].Err, "master %d", i)
	}
	for n := range 5 {
		time.Sleep(200 * time.Millisecond) // idle between rounds: nothing read from anyone for longer than its pace
		v := fmt.Sprintf("x%d", n)
		ps.Round(ctx, &wire.Cmd{Args: []string{"ECHO", v}, Want: "$", Granted: echoed, Quorum: 3}, out)
		for i := range out {
			require.NoError(t, out[i].Err, "round %d, master %d", n, i)
			assert.Equal(t, v, out[i].Str)
		}
		assert.GreaterOrEqual(t, out[4].Latency, 30*time.Millisecond, "the distant master's own answer")
	}
}
