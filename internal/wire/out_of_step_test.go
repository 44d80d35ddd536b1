package wire_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/faults"
	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/internal/wire"
)

// echoRounds sends n ECHO rounds of values of their own, from g goroutines, calling
// between after each of a goroutine's rounds, and returns how many were answered with their
// own value and how many with another (a misread); failures are neither.
func echoRounds(ps *wire.Pipes, masters, g, n int, between func(), timeout time.Duration) (answered, misread int64, first string) {
	var wg sync.WaitGroup
	var a, m atomic.Int64
	var once sync.Once
	for gi := range g {
		wg.Go(func() {
			out := make([]wire.Result, masters)
			for i := range n {
				v := fmt.Sprintf("g%d.%d", gi, i)
				ctx, cancel := context.WithTimeout(context.Background(), timeout)
				ps.Round(ctx, &wire.Cmd{Args: []string{"ECHO", v}, Want: "$"}, out)
				cancel()
				for j, res := range out {
					switch {
					case res.Err != nil:
					case res.Type == '$' && res.Str == v:
						a.Add(1)
					default:
						m.Add(1)
						once.Do(func() { first = fmt.Sprintf("master %d answered %c%q to ECHO %s", j, res.Type, res.Str, v) })
					}
				}
				between()
			}
		})
	}
	wg.Wait()
	return a.Load(), m.Load(), first
}

// TestAttackExtraReplyIsNotReadAsTheNextCommands: a master (here a fake one) that
// sends a reply to no command, in the same segment as a real reply, leaves it in
// the connection's read buffer once the batch is read. Nobody reads an idle
// connection, and the idle check looked at the socket only (and only after 10ms):
// the next command written on the connection was given that reply, and every
// later command the reply of the one before it (a vote for the wrong command).
// The connection is out of step and must be dropped before anything more is
// written on it, also when it comes a moment after the reply, in a segment of its own,
// and the next command follows at once. (A reply to no command in the middle of a batch cannot be told
// from the next command's by any pipelining client; the fake master adds its
// extra reply after the last command it has received.)
func TestAttackExtraReplyIsNotReadAsTheNextCommands(t *testing.T) {
	for _, tc := range []struct {
		name       string
		goroutines int
		pause      time.Duration
		later      bool // the extra reply comes a millisecond after the reply
	}{
		{"next round at once", 1, 0, false},
		{"next round after the idle check's threshold", 1, 15 * time.Millisecond, false},
		{"contended", 8, 0, false},
		{"extra reply in a later segment", 1, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var echoes atomic.Int64
			f := newFakeMaster(t, func(_ int, args []string, last bool) string {
				if args[0] != "ECHO" {
					return "-ERR unknown\r\n"
				}
				out := bulk(args[1])
				if echoes.Add(1)%5 == 1 && last {
					if tc.later {
						out += split
					}
					out += bulk("extra") // unasked
				}
				return out
			})
			between := func() { time.Sleep(tc.pause) }
			if tc.later {
				// The next round is sent once the extra reply is (and within 10ms).
				f.wrote = make(chan struct{}, 1000)
				between = func() { <-f.wrote; time.Sleep(time.Millisecond) }
			}
			ps := wire.New([]wire.Master{{Addr: f.addr()}}, wire.Config{Timeout: time.Second})
			t.Cleanup(func() { _ = ps.Close() })
			answered, misread, first := echoRounds(ps, 1, tc.goroutines, 40, between, time.Second)
			t.Logf("%d answered, %d misread", answered, misread)
			assert.Zero(t, misread, "a reply to no command was read as a command's: %s", first)
			assert.Positive(t, answered)
		})
	}
}

// blockingEcho is a fake master's answer: ECHO's value, after hold is closed for a
// value starting with "hold" (the connection's handler waits: nothing more is
// read or answered on it meanwhile). INFO waits for holdInfo when it is set.
func blockingEcho(hold <-chan struct{}) func(int, []string, bool) string {
	return func(_ int, args []string, _ bool) string {
		if len(args) < 2 {
			return "-ERR args\r\n"
		}
		if len(args[1]) >= 4 && args[1][:4] == "hold" {
			<-hold
		}
		return bulk(args[1])
	}
}

// TestAttackGivenUpWhileQueuedIsNeverWritten: commands that queue behind a batch
// in flight (one batch at a time per connection) and whose rounds give up there
// (a deadline, a cancellation) are never written, when the batch's reply comes
// late, and when it never comes (the connection is dropped and the next command
// goes on a new one). The fake master logs what it receives.
func TestAttackGivenUpWhileQueuedIsNeverWritten(t *testing.T) {
	for _, tc := range []struct {
		name    string
		release bool // the held reply comes, late; else the connection is dropped as hung
		cancel  bool // the queued rounds are cancelled rather than timed out
	}{
		{"late reply, deadlines", true, false},
		{"late reply, cancellations", true, true},
		{"no reply, deadlines", false, false},
		{"no reply, cancellations", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hold := make(chan struct{})
			f := newFakeMaster(t, blockingEcho(hold))
			timeout := 300 * time.Millisecond
			ps := wire.New([]wire.Master{{Addr: f.addr()}}, wire.Config{Timeout: timeout})
			t.Cleanup(func() { _ = ps.Close() })
			defer func() {
				select {
				case <-hold:
				default:
					close(hold)
				}
			}()
			ctx := context.Background()
			out := make([]wire.Result, 1)
			ps.Round(ctx, &wire.Cmd{Args: []string{"ECHO", "warm"}, Want: "$"}, out)
			assert.Equal(t, "warm", out[0].Str)

			held := make(chan wire.Result, 1)
			go func() {
				o := make([]wire.Result, 1)
				ps.Round(ctx, &wire.Cmd{Args: []string{"ECHO", "hold"}, Want: "$"}, o)
				held <- o[0]
			}()
			waitReceived(t, f, "hold")
			var wg sync.WaitGroup
			for i := range 16 {
				wg.Go(func() {
					o := make([]wire.Result, 1)
					var rctx context.Context
					var cancel context.CancelFunc
					if tc.cancel {
						rctx, cancel = context.WithCancel(ctx)
						time.AfterFunc(time.Duration(1+i%5)*time.Millisecond, cancel)
					} else {
						rctx, cancel = context.WithTimeout(ctx, time.Duration(1+i%5)*time.Millisecond)
					}
					defer cancel()
					ps.Round(rctx, &wire.Cmd{Args: []string{"ECHO", fmt.Sprintf("queued%d", i)}, Want: "$"}, o)
					assert.Error(t, o[0].Err, "queued%d", i)
				})
			}
			wg.Wait()
			if tc.release {
				close(hold)
				r := <-held
				assert.Equal(t, "hold", r.Str, "the held round's own reply")
			} else {
				r := <-held // dropped as hung after the node timeout
				assert.Error(t, r.Err)
			}
			ps.Round(ctx, &wire.Cmd{Args: []string{"ECHO", "after"}, Want: "$"}, out)
			assert.NoError(t, out[0].Err)
			assert.Equal(t, "after", out[0].Str)
			for _, cmd := range f.received() {
				assert.NotContains(t, cmd[1], "queued", "a command written after its round gave up")
			}
		})
	}
}

// waitReceived waits until the fake master has received ECHO v.
func waitReceived(t *testing.T, f *fakeMaster, v string) {
	t.Helper()
	for range 500 {
		for _, cmd := range f.received() {
			if len(cmd) > 1 && cmd[1] == v {
				return
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("the fake master never got ECHO %s", v)
}

// TestAttackBulkNotEndedByCRLFIsOutOfStep: a bulk string whose announced length
// is not followed by CRLF (a master cut short, or lying about the length) leaves
// the connection out of step: the reply must not be taken (it was, with the two
// bytes after the announced length read as its CRLF), and the connection is
// dropped.
func TestAttackBulkNotEndedByCRLFIsOutOfStep(t *testing.T) {
	var n atomic.Int64
	f := newFakeMaster(t, func(_ int, args []string, _ bool) string {
		v := args[1]
		if n.Add(1)%3 == 1 {
			return "$" + fmt.Sprint(len(v)) + "\r\n" + v[:1] + "garbage without CRLF\r\n"
		}
		return bulk(v)
	})
	ps := wire.New([]wire.Master{{Addr: f.addr()}}, wire.Config{Timeout: time.Second})
	t.Cleanup(func() { _ = ps.Close() })
	answered, misread, first := echoRounds(ps, 1, 1, 30, func() {}, time.Second)
	t.Logf("%d answered, %d misread", answered, misread)
	assert.Zero(t, misread, "a reply not ended by CRLF was taken: %s", first)
	assert.Positive(t, answered)
}

// lateCheckCtx is a context cancelled just after a given call of Err has looked
// (and found it not cancelled): the call cancels it, lets the cancellation's
// callbacks run, and then answers nil, as if the caller had been descheduled
// right after the check.
type lateCheckCtx struct {
	context.Context
	cancel  context.CancelFunc
	calls   atomic.Int32
	trigger int32
}

func (c *lateCheckCtx) Err() error {
	if c.calls.Add(1) == c.trigger {
		c.cancel()
		time.Sleep(20 * time.Millisecond) // context.AfterFunc's callbacks run meanwhile
		return nil
	}
	return c.Context.Err()
}

// TestAttackCancelBetweenCheckAndReadEndsRoundAtOnce: a round reading its own
// reply looks at its context before it sets the read deadline of each master's
// connection, and a cancellation sets every such deadline to now. A cancellation
// that falls between the look and the deadline was overridden by the deadline
// (up to half the node timeout away): the round waited for the slow master's
// reply instead of returning at once.
func TestAttackCancelBetweenCheckAndReadEndsRoundAtOnce(t *testing.T) {
	c := redistest.Start(t, 1, redistest.Options{})
	p := faults.NewProxy(t, c.Servers[0].Addr())
	ps := wire.New([]wire.Master{{Addr: p.Addr()}}, wire.Config{Timeout: 2 * time.Second})
	t.Cleanup(func() { _ = ps.Close() })
	out := make([]wire.Result, 1)
	ps.Round(context.Background(), &wire.Cmd{Args: []string{"ECHO", "warm"}, Want: "$"}, out)
	require.Equal(t, "warm", out[0].Str)
	const slow = 400 * time.Millisecond
	p.SetLatency(0, slow)
	for i := range 3 {
		time.Sleep(slow + 50*time.Millisecond) // the last round's reply is in: the pipe is idle
		base, cancel := context.WithCancel(context.Background())
		// Err's first call is Round's, at its start; the second the look before
		// the first read.
		ctx := &lateCheckCtx{Context: base, cancel: cancel, trigger: 2}
		start := time.Now()
		ps.Round(ctx, &wire.Cmd{Args: []string{"ECHO", fmt.Sprint(i)}, Want: "$"}, out)
		took := time.Since(start)
		cancel()
		assert.ErrorIs(t, out[0].Err, context.Canceled, "round %d", i)
		assert.Less(t, took, slow/2, "round %d returned %v after its start, cancelled after 20ms", i, took)
	}
}
