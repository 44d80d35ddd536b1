package wire_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/redlock/redlock/internal/wire"
)

// TestTimerRaceLeavesNoWakeUpBehind: a round waits on one channel, woken by its
// last result and by its timer. When the timer fires as the last reply comes, the
// round is reused (nothing was abandoned) and must not carry the second wake-up
// into its next use, which would then end at once, its replies not read. Rounds
// whose timer races their replies alternate with rounds that wait for a slower
// reply: every slow one must get its own reply.
func TestTimerRaceLeavesNoWakeUpBehind(t *testing.T) {
	f := newFakeMaster(t, func(_ int, args []string, _ bool) string {
		if len(args) < 2 {
			return "-ERR args\r\n"
		}
		if strings.HasPrefix(args[1], "slow") {
			time.Sleep(2 * time.Millisecond)
		} else {
			time.Sleep(time.Duration(rand.IntN(6000)) * time.Microsecond) // around the timer's end
		}
		return bulk(args[1])
	})
	ps := wire.New([]wire.Master{{Addr: f.addr()}}, wire.Config{Timeout: 5 * time.Second})
	t.Cleanup(func() { _ = ps.Close() })
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for g := range errs {
		wg.Go(func() {
			out := make([]wire.Result, 1)
			for i := range 150 {
				// The timer ends the round 2 ms (the grace) after this deadline.
				ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
				ps.Round(ctx, &wire.Cmd{Args: []string{"ECHO", fmt.Sprintf("g%d.%d", g, i)}, Want: "$"}, out)
				cancel()
				v := fmt.Sprintf("slow.g%d.%d", g, i)
				ps.Round(context.Background(), &wire.Cmd{Args: []string{"ECHO", v}, Want: "$"}, out)
				if out[0].Err != nil || out[0].Str != v {
					errs[g] = fmt.Errorf("round %d: ECHO %s: %q, %v", i, v, out[0].Str, out[0].Err)
					return
				}
			}
		})
	}
	wg.Wait()
	for g, err := range errs {
		assert.NoError(t, err, "goroutine %d", g)
	}
}

// TestBadReplyAmongBufferedReplies: the pump reads every reply already buffered
// before it gives them to their commands. A master that answers a batch in one
// write with a reply of no RESP type among them: the replies before it reach their
// commands, the connection is dropped there, and nothing after it is read as a
// command's reply.
func TestBadReplyAmongBufferedReplies(t *testing.T) {
	var mu sync.Mutex
	pending := map[int][]string{}
	batches := 0
	f := newFakeMaster(t, func(conn int, args []string, last bool) string {
		mu.Lock()
		defer mu.Unlock()
		if len(args) < 2 {
			return "-ERR args\r\n"
		}
		replies := append(pending[conn], bulk(args[1]))
		if !last {
			pending[conn] = replies // answered with the batch's last command
			return ""
		}
		delete(pending, conn)
		if batches++; batches%3 == 0 && len(replies) > 1 {
			replies = slices.Insert(replies, 1, "!no such type\r\n")
		}
		return strings.Join(replies, "")
	})
	var dropped atomic.Int64
	ps := wire.New([]wire.Master{{Addr: f.addr()}}, wire.Config{Timeout: time.Second, Observe: func(e wire.Event) {
		if e.Kind == wire.EventDropped {
			dropped.Add(1)
		}
	}})
	t.Cleanup(func() { _ = ps.Close() })
	answered, misread, first := echoRounds(ps, 1, 8, 40, func() {}, time.Second)
	t.Logf("%d answered, %d misread, %d connections dropped", answered, misread, dropped.Load())
	assert.Zero(t, misread, "a reply after the bad one was taken: %s", first)
	assert.Positive(t, answered)
	assert.Positive(t, dropped.Load())
}
