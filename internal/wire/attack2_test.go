package wire_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

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
