package wire_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/redlock/redlock/internal/faults"
	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/internal/wire"
)

// garbageEcho answers ECHO like a master that misbehaves now and then: slowly, with
// a reply of a type ECHO cannot get, or by closing the connection in the middle
// of a reply. Every reply it sends to a command is that command's own.
func garbageEcho(seed uint64) func(int, []string, bool) string {
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(seed, 7))
	return func(_ int, args []string, _ bool) string {
		mu.Lock()
		n, d := rng.IntN(100), time.Duration(rng.IntN(30))*time.Millisecond
		mu.Unlock()
		if len(args) < 2 {
			return "-ERR args\r\n"
		}
		switch {
		case n < 5:
			time.Sleep(d)
		case n < 7:
			return ":1\r\n"
		case n < 9:
			return "$" + fmt.Sprint(len(args[1])) + "\r\n" + args[1][:1] + split + "close"
		case n < 10:
			return "close"
		}
		return bulk(args[1])
	}
}

// pipeGoroutines counts the goroutines running the pipes' code.
func pipeGoroutines() int {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "wire.(*pipe)") {
			n++
		}
	}
	return n
}

// TestAttackRandomCancelUnderFaults: 48 goroutines send ECHO rounds of their own
// values to five masters, with deadlines of 0.1-40ms and a third of them
// cancelled at a random instant, while the masters are frozen (SIGSTOP, DEBUG
// SLEEP), killed and restarted without data, blackholed, reset and slowed in the
// network, and one (a fake) replies slowly, out of type, or closes mid-reply.
// Every round ends within its deadline (the node timeout, or its context's),
// every cancelled round soon after its cancellation (bounds generous for a loaded
// machine: a hang or a deadlock shows as seconds); no reply is read as another
// command's; Close leaves no goroutine behind.
func TestAttackRandomCancelUnderFaults(t *testing.T) {
	run := 3 * time.Second
	if testing.Short() {
		run = time.Second
	}
	const timeout = 25 * time.Millisecond
	const slack = 250 * time.Millisecond
	c := redistest.Start(t, 4, redistest.Options{})
	f := newFakeMaster(t, garbageEcho(1))
	var proxies []*faults.Proxy
	var masters []wire.Master
	for _, s := range c.Servers {
		p := faults.NewProxy(t, s.Addr())
		proxies = append(proxies, p)
		masters = append(masters, wire.Master{Addr: p.Addr()})
	}
	masters = append(masters, wire.Master{Addr: f.addr()})
	var dropped, late atomic.Int64
	ps := wire.New(masters, wire.Config{Timeout: timeout, Observe: func(e wire.Event) {
		switch e.Kind {
		case wire.EventDropped:
			dropped.Add(1)
		case wire.EventLateReply:
			late.Add(1)
		}
	}})
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = ps.Close()
		}
	})

	ctx, stop := context.WithTimeout(context.Background(), run)
	defer stop()
	var nemesis sync.WaitGroup
	nemesis.Go(func() { // process faults
		rng := rand.New(rand.NewPCG(2, 2))
		for ctx.Err() == nil {
			switch rng.IntN(3) {
			case 0:
				faults.Pause(c.Servers[0], time.Duration(5+rng.IntN(60))*time.Millisecond)
			case 1:
				_ = faults.DebugSleep(context.Background(), c.Servers[1], time.Duration(10+rng.IntN(60))*time.Millisecond)
			case 2:
				c.Servers[2].Restart(false)
			}
			time.Sleep(time.Duration(20+rng.IntN(80)) * time.Millisecond)
		}
	})
	nemesis.Go(func() { // network faults on master 3
		rng := rand.New(rand.NewPCG(3, 3))
		p := proxies[3]
		for ctx.Err() == nil {
			switch rng.IntN(4) {
			case 0:
				p.Blackhole()
			case 1:
				p.Reset()
			case 2:
				p.SetLatency(time.Duration(rng.IntN(20))*time.Millisecond, time.Duration(rng.IntN(20))*time.Millisecond)
			case 3:
				p.LoseReplies()
			}
			time.Sleep(time.Duration(5+rng.IntN(60)) * time.Millisecond)
			p.Heal()
			time.Sleep(time.Duration(5+rng.IntN(60)) * time.Millisecond)
		}
	})

	var wg sync.WaitGroup
	var mu sync.Mutex
	var overshoots, afterCancel []time.Duration
	var misread, answered, failed atomic.Int64
	var first atomic.Value
	for g := range 48 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 9))
			out := make([]wire.Result, len(masters))
			var over, canc []time.Duration
			for i := 0; ctx.Err() == nil; i++ {
				v := fmt.Sprintf("g%d.%d", g, i)
				t0 := time.Now()
				d := time.Duration(100+rng.IntN(40000)) * time.Microsecond
				rctx, cancel := context.WithTimeout(context.Background(), d)
				var cancelledAt atomic.Int64
				if rng.IntN(3) == 0 {
					time.AfterFunc(time.Duration(rng.IntN(3000))*time.Microsecond, func() {
						cancelledAt.Store(time.Now().UnixNano())
						cancel()
					})
				}
				ps.Round(rctx, &wire.Cmd{Args: []string{"ECHO", v}, Want: "$"}, out)
				end := time.Now()
				cancel()
				over = append(over, end.Sub(t0.Add(min(d, timeout))))
				if at := cancelledAt.Load(); at != 0 {
					canc = append(canc, end.Sub(time.Unix(0, at)))
				}
				for j, res := range out {
					switch {
					case res.Err != nil:
						failed.Add(1)
					case res.Type == '$' && res.Str == v:
						answered.Add(1)
					default:
						misread.Add(1)
						first.CompareAndSwap(nil, fmt.Sprintf("master %d answered %c%q to ECHO %s", j, res.Type, res.Str, v))
					}
				}
			}
			mu.Lock()
			overshoots = append(overshoots, over...)
			afterCancel = append(afterCancel, canc...)
			mu.Unlock()
		})
	}
	wg.Wait()
	nemesis.Wait()
	for _, p := range proxies {
		p.Heal()
	}
	c.Servers[0].Cont()

	slices.Sort(overshoots)
	slices.Sort(afterCancel)
	pct := func(xs []time.Duration, q float64) time.Duration {
		if len(xs) == 0 {
			return 0
		}
		return xs[int(q*float64(len(xs)-1))]
	}
	t.Logf("%d rounds: %d answered, %d failed, %d misread; %d connections dropped, %d late replies drained",
		len(overshoots), answered.Load(), failed.Load(), misread.Load(), dropped.Load(), late.Load())
	t.Logf("past the deadline: p50 %v p99 %v max %v; after a cancellation (%d): p50 %v p99 %v max %v",
		pct(overshoots, .5), pct(overshoots, .99), pct(overshoots, 1), len(afterCancel), pct(afterCancel, .5), pct(afterCancel, .99), pct(afterCancel, 1))
	assert.Zero(t, misread.Load(), "a reply was read as another command's: %v", first.Load())
	assert.Positive(t, answered.Load())
	assert.LessOrEqual(t, pct(overshoots, 1), slack, "a round outlived its deadline")
	assert.LessOrEqual(t, pct(afterCancel, 1), slack, "a round outlived its cancellation")

	closed = true
	_ = ps.Close()
	deadline := time.Now().Add(2 * time.Second)
	for pipeGoroutines() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	assert.Zero(t, pipeGoroutines(), "goroutines of the pipes left after Close")
}
