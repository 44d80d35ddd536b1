package wire_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"

	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/internal/wire"
	"github.com/redlock/redlock/internal/wire/wiretest"
)

// rounders returns the Rounders under test over the servers: the pipelined one,
// the go-redis one, and the deliberately broken Forgetful.
func rounders(t *testing.T, c *redistest.Cluster, timeout time.Duration) map[string]wire.Rounder {
	masters := make([]wire.Master, len(c.Servers))
	g := &wiretest.GoRedis{Timeout: timeout}
	f := &wiretest.Forgetful{Timeout: timeout}
	for i, s := range c.Servers {
		masters[i] = wire.Master{Addr: s.Addr()}
		cl := redis.NewClient(&redis.Options{Addr: s.Addr(), Protocol: 2, ContextTimeoutEnabled: true, MaxRetries: -1,
			DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout, PoolSize: 64, DisableIdentity: true})
		t.Cleanup(func() { _ = cl.Close() })
		g.Clients = append(g.Clients, cl)
		addr := s.Addr()
		f.Dial = append(f.Dial, func(ctx context.Context) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", addr)
		})
	}
	ps := wire.New(masters, wire.Config{Timeout: timeout})
	t.Cleanup(func() { _ = ps.Close(); _ = f.Close() })
	return map[string]wire.Rounder{"wire": ps, "go-redis": g, "forgetful": f}
}

// TestAttackLateRepliesNeverMisread: 64 goroutines send ECHO of a value of their
// own in rounds whose deadlines (0.1-3ms) and cancellations come at random, while
// a master is paused and resumed and another has its clients killed. A reply read
// as another command's shows as an ECHO of someone else's value. The pipelined and
// the go-redis Rounders must never misread; the Forgetful one (a pipeline that
// forgets the commands its rounds gave up) must be caught.
func TestAttackLateRepliesNeverMisread(t *testing.T) {
	c := redistest.Start(t, 3, redistest.Options{})
	rs := rounders(t, c, 50*time.Millisecond)
	for _, name := range []string{"wire", "go-redis", "forgetful"} {
		t.Run(name, func(t *testing.T) {
			r := rs[name]
			ctx, stop := context.WithTimeout(context.Background(), 1500*time.Millisecond)
			defer stop()
			var nemesis sync.WaitGroup
			nemesis.Go(func() {
				admin := c.Servers[2].Client()
				for ctx.Err() == nil {
					c.Servers[0].Stop()
					time.Sleep(time.Duration(5+rand.IntN(30)) * time.Millisecond)
					c.Servers[0].Cont()
					_ = admin.ClientKillByFilter(context.Background(), "TYPE", "normal", "SKIPME", "yes").Err()
					time.Sleep(time.Duration(20+rand.IntN(50)) * time.Millisecond)
				}
			})
			var wg sync.WaitGroup
			var misread, answered, failed atomic.Int64
			for g := range 64 {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(g), 3))
					out := make([]wire.Result, len(c.Servers))
					for i := 0; ctx.Err() == nil; i++ {
						v := fmt.Sprintf("g%d.%d", g, i)
						rctx, cancel := context.WithTimeout(context.Background(), time.Duration(100+rng.IntN(2900))*time.Microsecond)
						if rng.IntN(4) == 0 {
							time.AfterFunc(time.Duration(rng.IntN(1000))*time.Microsecond, cancel)
						}
						r.Round(rctx, &wire.Cmd{Args: []string{"ECHO", v}, Want: "$"}, out)
						cancel()
						for j, res := range out {
							switch {
							case res.Err != nil:
								failed.Add(1)
							case res.Type != '$' || res.Str != v:
								if misread.Add(1) <= 3 {
									t.Logf("%s: master %d answered %c%q to ECHO %s", name, j, res.Type, res.Str, v)
								}
							default:
								answered.Add(1)
							}
						}
					}
				})
			}
			wg.Wait()
			nemesis.Wait()
			c.Servers[0].Cont()
			t.Logf("%s: %d answered, %d failed, %d misread", name, answered.Load(), failed.Load(), misread.Load())
			assert.Positive(t, answered.Load())
			if name == "forgetful" {
				assert.Positive(t, misread.Load(), "the attack did not catch a pipeline that forgets abandoned commands")
			} else {
				assert.Zero(t, misread.Load(), "a reply was read as another command's")
			}
		})
	}
}
