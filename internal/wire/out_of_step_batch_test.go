package wire_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/redlock/redlock/internal/wire"
)

// TestBugOutOfStepReplyMidBatchFailsTheRestAtOnce: a master answers a batch of
// pipelined commands in one write, and one reply in the middle has a type its
// command cannot get (the connection is out of step and is dropped). Every
// command of the batch after it must fail at once with the connection, not wait
// for its round's deadline: they were in flight on the dropped connection.
func TestBugOutOfStepReplyMidBatchFailsTheRestAtOnce(t *testing.T) {
	var mu sync.Mutex
	var pending []string
	f := newFakeMaster(t, func(_ int, args []string, last bool) string {
		if args[0] != "ECHO" {
			return "-ERR unknown\r\n"
		}
		mu.Lock()
		defer mu.Unlock()
		if strings.HasPrefix(args[1], "bad") {
			pending = append(pending, ":1\r\n") // an integer to ECHO: out of step
		} else {
			pending = append(pending, bulk(args[1]))
		}
		if !last {
			return "" // the batch is answered in one write, after its last command
		}
		out := strings.Join(pending, "")
		pending = nil
		return out
	})
	const timeout = 5 * time.Second
	ps := wire.New([]wire.Master{{Addr: f.addr()}}, wire.Config{Timeout: timeout})
	t.Cleanup(func() { _ = ps.Close() })
	worst := time.Duration(0)
	for try := range 20 {
		var wg sync.WaitGroup
		start := make(chan struct{})
		var wmu sync.Mutex
		for g := range 8 {
			wg.Go(func() {
				v := fmt.Sprintf("g%d.%d", g, try)
				if g == 2 {
					v = "bad" + v
				}
				out := make([]wire.Result, 1)
				<-start
				ctx, cancel := context.WithTimeout(context.Background(), 2*timeout)
				defer cancel()
				t0 := time.Now()
				ps.Round(ctx, &wire.Cmd{Args: []string{"ECHO", v}, Want: "$"}, out)
				d := time.Since(t0)
				wmu.Lock()
				worst = max(worst, d)
				wmu.Unlock()
				if out[0].Err == nil {
					assert.Equal(t, v, out[0].Str)
				}
			})
		}
		close(start)
		wg.Wait()
		if worst > timeout/2 {
			break
		}
	}
	assert.Less(t, worst, timeout/2, "a command answered after the out-of-step reply waited for its deadline")
}
