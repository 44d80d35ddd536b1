package cli

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/redlock/redlock/internal/connect"
	"github.com/redlock/redlock/internal/local"
	"github.com/redlock/redlock/quorum"
	"github.com/redlock/redlock/topology"
)

// demoArgs are the arguments of demo.
type demoArgs struct {
	quiet, embedded, readOnly bool
	interval                  time.Duration
	metrics                   metricsFlag
}

func (a *demoArgs) flags(f *Flags) {
	f.Bool(&a.quiet, "quiet", "no background workers")
	f.Bool(&a.embedded, "embedded", "use in-process embedded servers even when redis-server is installed")
	f.Bool(&a.readOnly, "read-only", "open the console read-only")
	f.Duration(&a.interval, "interval", time.Second, "refresh interval (default 1s)").atLeast(50 * time.Millisecond)
	a.metrics.flags(f)
}

func (a *demoArgs) parse(p *parsed) error { return p.noArgs("") }

var _ = define(&Command{
	Name:     "demo",
	Synopsis: "five local masters, background workers and the console on them; no file needed",
	About: `
Starts five throwaway masters on free loopback ports (redis-server when installed,
else in-process embedded servers), builds an in-memory topology for them with the
restart quarantine off (they are brand new and keep no data), and opens the console
on it. Unless -quiet, three background workers take and release locks with quorum
so that the screen shows life. Everything stops when the console quits.`,
	Exits: []Exit{
		{0, "the console was quit (q)"},
		{1, "error (no terminal, the masters could not start)"},
		{2, "usage error"},
	},
}, runDemo)

// demoNames are the lock names the demo workers take.
var demoNames = []string{"billing/invoice-42", "reports/daily", "orders/7", "cache/rebuild", "jobs/cleanup", "payments/settle"}

func runDemo(ctx context.Context, env *Env, a *demoArgs) error {
	quiet, embedded, readOnly, interval, mf := &a.quiet, &a.embedded, &a.readOnly, &a.interval, &a.metrics
	if _, _, err := terminal(env); err != nil {
		return fail(ExitError, err)
	}
	set, c, err := startDemo(ctx, *embedded)
	if err != nil {
		return fail(ExitError, err)
	}
	defer set.Close()

	wctx, stopWorkers := context.WithCancel(ctx)
	var wg sync.WaitGroup
	if !*quiet {
		for i := range 3 {
			mgr, err := connect.Manager(c, quorum.WithOwner(fmt.Sprintf("demo-worker-%d", i+1)))
			if err != nil {
				stopWorkers()
				wg.Wait()
				return fail(ExitError, err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer mgr.Close()
				demoWorker(wctx, mgr, rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(i))))
			}()
		}
	}
	kind := "redis-server"
	if set.Embedded {
		kind = "embedded"
	}
	obs, stopMetrics, err := mf.start(env, c)
	if err != nil {
		stopWorkers()
		wg.Wait()
		return fail(ExitError, err)
	}
	defer stopMetrics()
	code := runConsole(ctx, env, c, consoleSettings{
		readOnly: *readOnly, interval: *interval, actionTimeout: 5 * time.Second, embedded: set.Embedded,
		note: "demo (" + kind + ") · restart quarantine off", observer: obs,
	})
	stopWorkers()
	wg.Wait() // workers release what they hold before the masters stop
	return exitStatus(code)
}

// startDemo starts five masters on free loopback ports and returns the in-memory
// topology for them.
func startDemo(ctx context.Context, embedded bool) (*local.Set, *topology.Cluster, error) {
	specs := make([]local.Spec, 5)
	for i := range specs {
		specs[i] = local.Spec{Name: string(rune('a' + i)), Addr: "127.0.0.1:0"}
	}
	set, err := local.Start(ctx, specs, local.Options{Embedded: embedded})
	if err != nil {
		return nil, nil, err
	}
	return set, demoCluster(set), nil
}

// demoCluster is the topology of the demo masters: the defaults, with the restart
// quarantine off (brand-new masters without data would otherwise not vote for
// max_ttl) and a node timeout that suits an in-process server.
func demoCluster(set *local.Set) *topology.Cluster {
	c := topology.NewCluster("demo")
	c.TTL = 15 * time.Second
	c.RestartQuarantine = false
	c.NodeTimeout = 100 * time.Millisecond
	c.Retry = topology.Retry{Attempts: 3, Delay: 150 * time.Millisecond, Jitter: 100 * time.Millisecond}
	for _, m := range set.Masters {
		c.Masters = append(c.Masters, topology.Master{Name: m.Name, Address: m.Addr})
	}
	return c
}

// demoWorker takes a random lock for a few seconds, sometimes extends it, releases
// it and pauses, until ctx ends; it releases what it holds before returning.
func demoWorker(ctx context.Context, mgr *quorum.Manager, rnd *rand.Rand) {
	for ctx.Err() == nil {
		hold := time.Duration(2000+rnd.IntN(6000)) * time.Millisecond
		_ = demoRound(ctx, mgr, rnd, hold)
		sleepCtx(ctx, time.Duration(300+rnd.IntN(1500))*time.Millisecond)
	}
}

// demoKinds are the kinds of hold the demo workers take, so that the console
// shows each: a plain lock (most often), a permit of a semaphore, a shared hold,
// a multi-name hold and an election's leadership.
var demoKinds = []func(ctx context.Context, mgr *quorum.Manager, rnd *rand.Rand, ttl time.Duration) (*quorum.Lock, error){
	func(ctx context.Context, mgr *quorum.Manager, rnd *rand.Rand, ttl time.Duration) (*quorum.Lock, error) {
		return mgr.TryAcquire(ctx, demoNames[rnd.IntN(len(demoNames))], ttl)
	},
	func(ctx context.Context, mgr *quorum.Manager, _ *rand.Rand, ttl time.Duration) (*quorum.Lock, error) {
		sem, err := mgr.Semaphore("workers/pool", 3)
		if err != nil {
			return nil, err
		}
		p, err := sem.TryAcquire(ctx, ttl)
		if err != nil {
			return nil, err
		}
		return p.Lock, nil
	},
	func(ctx context.Context, mgr *quorum.Manager, _ *rand.Rand, ttl time.Duration) (*quorum.Lock, error) {
		sh, err := mgr.Shared("config/catalog")
		if err != nil {
			return nil, err
		}
		return sh.TryAcquire(ctx, ttl)
	},
	func(ctx context.Context, mgr *quorum.Manager, _ *rand.Rand, ttl time.Duration) (*quorum.Lock, error) {
		mu, err := mgr.Multi("ledger/eu", "ledger/us")
		if err != nil {
			return nil, err
		}
		return mu.TryAcquire(ctx, ttl)
	},
	func(ctx context.Context, mgr *quorum.Manager, _ *rand.Rand, ttl time.Duration) (*quorum.Lock, error) {
		e, err := mgr.Election("scheduler")
		if err != nil {
			return nil, err
		}
		cctx, cancel := context.WithTimeout(ctx, time.Second) // another worker may lead
		defer cancel()
		ld, err := e.Campaign(cctx, "scheduler (a demo worker)", ttl)
		if err != nil {
			return nil, err
		}
		return ld.Lock, nil
	},
}

// demoRound makes one cycle: takes a demo hold of a random kind (a plain lock
// half the time) with a TTL of 6-15s, holds it for hold (extending once half
// way, now and then), releases it.
func demoRound(ctx context.Context, mgr *quorum.Manager, rnd *rand.Rand, hold time.Duration) error {
	kind := 0
	if rnd.IntN(2) == 0 {
		kind = rnd.IntN(len(demoKinds))
	}
	return demoHold(ctx, mgr, rnd, hold, kind)
}

// demoHold is demoRound with the kind of hold given (an index of demoKinds).
func demoHold(ctx context.Context, mgr *quorum.Manager, rnd *rand.Rand, hold time.Duration, kind int) error {
	ttl := time.Duration(6+rnd.IntN(10)) * time.Second
	lk, err := demoKinds[kind](ctx, mgr, rnd, ttl)
	if err != nil {
		return err
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = lk.Release(rctx)
	}()
	if rnd.IntN(3) == 0 {
		sleepCtx(ctx, hold/2)
		if err := lk.Extend(ctx, ttl); err != nil {
			return err
		}
		sleepCtx(ctx, hold/2)
		return nil
	}
	sleepCtx(ctx, hold)
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
