package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redlock/redlock/internal/redistest"
)

// TestTimeoutBehaviour shows, for the lock client and each prototype, what a
// master that stops answering costs and leaves behind: 8 goroutines run 5 cycles
// each while one of five masters is stopped (SIGSTOP), then again after it
// resumes. It logs how long the stopped phase took (every round waits out the
// node timeout on the silent master), how many connections were dialled after the
// resume (a dropped connection is dialled again; the prototypes count their
// new-connection hook runs), and how many keys the resumed master kept with
// nobody to release them: commands written to the silent master whose caller had
// given up, run when it resumed (they expire with the TTL).
//
// It takes about 15 s, so it runs only with REDLOCK_BENCH_TIMEOUTS=1:
//
//	REDLOCK_BENCH_TIMEOUTS=1 go -C bench test . -run TimeoutBehaviour -v
func TestTimeoutBehaviour(t *testing.T) {
	if os.Getenv("REDLOCK_BENCH_TIMEOUTS") == "" {
		t.Skip("set REDLOCK_BENCH_TIMEOUTS=1 to run")
	}
	c := redistest.Start(t, 5, redistest.Options{})
	silent := c.Servers[4]
	type client struct {
		name  string
		cyc   cycler
		hooks *atomic.Int64 // nil: not counted
	}
	var clients []client
	clients = append(clients, client{name: "quorum", cyc: quorumCycler(t, c.Addrs())})
	for _, extra := range extraContenders {
		ct := extra(t, c.Addrs())
		clients = append(clients, client{name: ct.name, cyc: ct.forGoroutine(0)})
	}
	for _, p := range prototypes {
		var hooks atomic.Int64
		clients = append(clients, client{name: p.name, cyc: p.make(t, c.Addrs(), &hooks), hooks: &hooks})
	}

	ctx := context.Background()
	var report strings.Builder
	fmt.Fprintf(&report, "\n%-22s %-34s %-30s %s\n", "client", "master stopped: 40 cycles took", "after resume: cycles failed", "new conns / orphan keys on it")
	for _, cl := range clients {
		phase := func(tag string) (time.Duration, int64, string) {
			var wg sync.WaitGroup
			var fails atomic.Int64
			var first atomic.Value
			t0 := time.Now()
			for g := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 5 {
						key := "timeouts:" + cl.name + ":" + tag + ":" + strconv.Itoa(g) + ":" + strconv.Itoa(i)
						if err := cl.cyc(ctx, key); err != nil {
							fails.Add(1)
							first.CompareAndSwap(nil, err.Error())
						}
					}
				}()
			}
			wg.Wait()
			msg, _ := first.Load().(string)
			return time.Since(t0), fails.Load(), msg
		}
		if _, fails, msg := phase("warm"); fails > 0 {
			t.Fatalf("%s: %d cycles failed with every master up: %s", cl.name, fails, msg)
		}
		silent.Stop()
		stopped, _, _ := phase("stopped")
		time.Sleep(300 * time.Millisecond)
		silent.Cont()
		time.Sleep(200 * time.Millisecond)
		var before int64
		if cl.hooks != nil {
			before = cl.hooks.Load()
		}
		_, fails, msg := phase("resumed")
		conns := "n/a"
		if cl.hooks != nil {
			conns = strconv.FormatInt(cl.hooks.Load()-before, 10)
		}
		orphans := 0
		for _, k := range silent.Keys(ctx) {
			if strings.Contains(k, cl.name+":stopped:") {
				orphans++
			}
		}
		after := strconv.FormatInt(fails, 10)
		if fails > 0 {
			after += " (" + msg + ")"
		}
		fmt.Fprintf(&report, "%-22s %-34v %-30s %s / %d\n", cl.name, stopped.Round(time.Millisecond), after, conns, orphans)
	}
	t.Log(report.String())
}
