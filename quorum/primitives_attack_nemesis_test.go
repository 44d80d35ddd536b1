package quorum

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock/redlock/internal/faults"
	"github.com/redlock/redlock/internal/redistest"
)

// The nemesis of the primitives' attacks: faults inside Redlock's model (a master
// paused, killed and restarted with appendfsync always, script cache flushed; a
// client's links to some masters blackholed, slowed, losing replies or reset),
// one at a time, each lasting around the lock's TTL so that expiries and
// extensions meet them.

// atkAOFAlways is the masters' persistence for the nemesis: a restart keeps every
// acknowledged write.
var atkAOFAlways = redistest.Options{Args: []string{"--appendonly", "yes", "--appendfsync", "always"}}

// startNemesis runs nemesis in a goroutine of its own and returns a function that
// waits for it to end (after ctx ended): the test must not end while a fault is
// half applied (a master killed and not yet restarted fails the test after it
// completed).
func (a *atk) startNemesis(ctx context.Context, rng *rand.Rand, ttl time.Duration, clients []string) (wait func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.nemesis(ctx, rng, ttl, clients)
	}()
	return func() { <-done }
}

// nemesis injects faults until ctx ends. clients are the names of the clients
// whose links it may break.
func (a *atk) nemesis(ctx context.Context, rng *rand.Rand, ttl time.Duration, clients []string) {
	servers := a.c.Servers
	for ctx.Err() == nil {
		atkSleep(ctx, time.Duration(rng.Int64N(int64(ttl)))+ttl/4)
		if ctx.Err() != nil {
			return
		}
		s := servers[rng.IntN(len(servers))]
		cl := clients[rng.IntN(len(clients))]
		d := ttl/2 + time.Duration(rng.Int64N(int64(2*ttl)))
		switch rng.IntN(7) {
		case 0:
			a.fault("pause %s for %v", s.Name, d)
			faults.Pause(s, d)
		case 1:
			if a.forget {
				a.fault("kill and restart %s at once (its data lost)", s.Name)
				faults.KillRestart(s, 0, false)
				break
			}
			a.fault("kill and restart %s (AOF always)", s.Name)
			faults.KillRestart(s, time.Duration(rng.Int64N(int64(ttl))), true)
		case 2:
			a.fault("script flush on %s", s.Name)
			_ = s.Client().ScriptFlush(context.Background()).Err()
		case 3:
			two := []string{s.Name, servers[rng.IntN(len(servers))].Name}
			a.fault("blackhole %s -> %v for %v", cl, two, d)
			a.net.Each(cl, (*faults.Proxy).Blackhole, two...)
			atkSleep(ctx, d)
			a.net.Each(cl, (*faults.Proxy).Heal, two...)
		case 4:
			lat := time.Duration(rng.Int64N(int64(ttl / 2)))
			a.fault("latency %v on %s -> %s for %v", lat, cl, s.Name, d)
			a.net.Each(cl, func(p *faults.Proxy) { p.SetLatency(lat/2, lat/2) }, s.Name)
			atkSleep(ctx, d)
			a.net.Each(cl, (*faults.Proxy).Heal, s.Name)
		case 5:
			a.fault("lost replies %s -> %s for %v", cl, s.Name, d)
			a.net.Each(cl, (*faults.Proxy).LoseReplies, s.Name)
			atkSleep(ctx, d)
			a.net.Each(cl, (*faults.Proxy).Heal, s.Name)
		case 6:
			a.fault("reset %s -> all", cl)
			a.net.Each(cl, (*faults.Proxy).Reset)
		}
	}
}

// randCtx returns a context that ends at a random moment (cancelled or timed
// out, or never, a third of the time each), to cancel calls at every point.
func randCtx(ctx context.Context, rng *rand.Rand, upTo time.Duration) (context.Context, context.CancelFunc) {
	switch rng.IntN(3) {
	case 0:
		return context.WithTimeout(ctx, time.Duration(rng.Int64N(int64(upTo)))+time.Microsecond)
	case 1:
		c, cancel := context.WithCancel(ctx)
		t := time.AfterFunc(time.Duration(rng.Int64N(int64(upTo))), cancel)
		return c, func() { t.Stop(); cancel() }
	}
	return context.WithCancel(ctx)
}

// peer is another Redlock client on the same masters: SET NX PX on each (no
// script, no GET), a majority, validity ttl - elapsed - 1% - 2ms, and a
// compare-and-delete release. It is what redsync and node-redlock do.
type peer struct {
	name    string
	clients []*redis.Client
}

func (a *atk) peer(name string) *peer {
	p := &peer{name: name}
	for _, s := range a.c.Servers {
		px := a.net.Proxy(name, s.Name, s.Addr())
		c := redis.NewClient(&redis.Options{Addr: s.Addr(), Dialer: px.Dial, Protocol: 2, DisableIdentity: true,
			MaxRetries: -1, ContextTimeoutEnabled: true})
		a.t.Cleanup(func() { _ = c.Close() })
		p.clients = append(p.clients, c)
	}
	return p
}

var peerRelease = redis.NewScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`)

// lock takes key for ttl; it returns the validity deadline, or a zero time.
func (p *peer) lock(ctx context.Context, key, value string, ttl time.Duration) time.Time {
	start := time.Now()
	var mu sync.Mutex
	votes := 0
	var wg sync.WaitGroup
	for _, c := range p.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			defer cancel()
			if ok, err := c.SetNX(cctx, key, value, ttl).Result(); err == nil && ok {
				mu.Lock()
				votes++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	until := start.Add(ttl - ttl/100 - 2*time.Millisecond)
	if votes >= len(p.clients)/2+1 && time.Now().Before(until) {
		return until
	}
	p.unlock(key, value)
	return time.Time{}
}

func (p *peer) unlock(key, value string) {
	var wg sync.WaitGroup
	for _, c := range p.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			_ = peerRelease.Run(ctx, c, []string{key}, value).Err()
		}()
	}
	wg.Wait()
}

// holdFor keeps l for up to d (less when Done fires), then releases it with a
// context that may be cancelled at once.
func (a *atk) holdFor(rng *rand.Rand, owner string, l *Lock, returned time.Time, kind string, d time.Duration) {
	h := a.hold(owner, l, returned, kind)
	if !a.forget { // a master restarted without its data forgets what it held
		a.held(owner, l, kind)
	}
	select {
	case <-time.After(d):
	case <-l.Done():
	}
	h.Released(time.Now())
	rctx, cancel := randCtx(context.Background(), rng, 50*time.Millisecond)
	_ = l.Release(rctx)
	cancel()
}

// typedOrCancelled reports an acquisition error that is neither typed nor the
// context's end.
func (a *atk) typedOrCancelled(owner string, err error) {
	var re *RoundError
	var ne *NodeError
	switch {
	case err == nil, errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
	case errors.As(err, &re), errors.As(err, &ne):
	default:
		a.rec.Violate("untyped-failure", "%s: %T %v", owner, err, err)
	}
}

// atkSleep sleeps d or until ctx ends.
func atkSleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// atkSeed returns the seed of a randomized attack: REDLOCK_SEED when set, else
// the clock; it is logged for replay.
func atkSeed(t interface{ Logf(string, ...any) }) uint64 {
	seed := uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(os.Getenv("REDLOCK_SEED"), 10, 64); err == nil {
		seed = v
	}
	t.Logf("seed %d (replay with REDLOCK_SEED=%d)", seed, seed)
	return seed
}

// atkDuration is how long a randomized attack runs: 3s, or REDLOCK_ATTACK_SOAK
// (a duration) for a longer soak.
func atkDuration() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("REDLOCK_ATTACK_SOAK")); err == nil && d > 0 {
		return d
	}
	return 3 * time.Second
}
