package bench

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// Benchmark-only prototypes of one Redlock cycle, to choose the lock client's hot
// path by measurement: SET key value NX PX ttl on every master in parallel, count
// the grants, then the compare-and-delete release script by EVALSHA on every
// master. Each is built on a different client library:
//
//   - goredis: plain go-redis clients (a pool of connections per master, one
//     connection per command in flight), one goroutine per master per round.
//   - goredis-autopipeline: go-redis's experimental AutoPipeline (v9.22+), the
//     deferred face (AsyncAutoPipeline): the calling goroutine queues the command on
//     every master's pipeliner and then waits for the replies, no goroutine per
//     master; the engine batches all goroutines' queued commands into pipelines.
//   - rueidis: one rueidis client per master; concurrent Do calls on a connection
//     are pipelined automatically. Do blocks, so one goroutine per master per round.
//     rueidis-tuned: the same with one connection per master and a 20 µs flush
//     delay.
//
// None is a lock client: no validity (drift) check, no quorum-aware early return,
// no retry policy. Each runs a hook on every new connection (INFO server, as the
// restart quarantine needs), counted in connHooks, to show the hook is possible.

// prototypes are the cyclers above, by name; hooks counts the runs of their
// new-connection hook.
var prototypes = []struct {
	name string
	make func(tb testing.TB, addrs []string, hooks *atomic.Int64) cycler
}{
	{"goredis", goredisCycler},
	{"goredis-autopipeline", autoPipelineCycler},
	{"goredis-autopipeline-rl1", autoPipelineRL1Cycler},
	{"rueidis", rueidisCycler},
	{"rueidis-tuned", rueidisTunedCycler},
}

// releaseSHA is the SHA1 of floorRelease, the release script every prototype
// loads and runs.
var releaseSHA = func() string {
	sum := sha1.Sum([]byte(floorRelease))
	return hex.EncodeToString(sum[:])
}()

// tokens returns a source of unique lock values: a random prefix and a counter.
func tokens() func() string {
	var p [8]byte
	_, _ = rand.Read(p[:])
	prefix := hex.EncodeToString(p[:]) + "-"
	var n atomic.Uint64
	return func() string { return prefix + strconv.FormatUint(n.Add(1), 36) }
}

// fanOut runs f for masters 0..n-1 in parallel (the last on the calling goroutine)
// and counts the trues.
func fanOut(n int, f func(i int) bool) int {
	var wg sync.WaitGroup
	var count atomic.Int32
	wg.Add(n - 1)
	for i := 0; i < n-1; i++ {
		go func() {
			defer wg.Done()
			if f(i) {
				count.Add(1)
			}
		}()
	}
	if f(n - 1) {
		count.Add(1)
	}
	wg.Wait()
	return int(count.Load())
}

// cycleErr is the verdict of one prototype cycle.
func cycleErr(name string, granted, released, n int) error {
	if granted < n/2+1 {
		return fmt.Errorf("%s: %d of %d grants", name, granted, n)
	}
	if released < n {
		return fmt.Errorf("%s: release reached %d of %d masters", name, released, n)
	}
	return nil
}

// goredisOnConnect is the new-connection hook of the go-redis prototypes: INFO
// server on the connection before go-redis hands it out.
func goredisOnConnect(hooks *atomic.Int64) func(ctx context.Context, cn *redis.Conn) error {
	return func(ctx context.Context, cn *redis.Conn) error {
		if hooks != nil {
			hooks.Add(1)
		}
		return cn.Info(ctx, "server").Err()
	}
}

func loadReleaseScript(c *redis.Client) error {
	sha, err := c.ScriptLoad(context.Background(), floorRelease).Result()
	if err == nil && sha != releaseSHA {
		err = fmt.Errorf("script sha %s, want %s", sha, releaseSHA)
	}
	return err
}

// goredisCycler: plain go-redis, one client per master, per-command deadlines by
// context (ContextTimeoutEnabled), no retries.
func goredisCycler(tb testing.TB, addrs []string, hooks *atomic.Int64) cycler {
	clients := make([]*redis.Client, len(addrs))
	for i, a := range addrs {
		c := redis.NewClient(&redis.Options{Addr: a, MaxRetries: -1, ContextTimeoutEnabled: true, OnConnect: goredisOnConnect(hooks)})
		tb.Cleanup(func() { _ = c.Close() })
		if err := loadReleaseScript(c); err != nil {
			tb.Fatal(err)
		}
		clients[i] = c
	}
	token, n := tokens(), len(clients)
	return func(ctx context.Context, key string) error {
		val := token()
		rctx, cancel := context.WithTimeout(ctx, benchNodeTimeout)
		granted := fanOut(n, func(i int) bool {
			ok, err := clients[i].SetNX(rctx, key, val, benchTTL).Result()
			return err == nil && ok
		})
		cancel()
		rctx, cancel = context.WithTimeout(ctx, benchNodeTimeout)
		released := fanOut(n, func(i int) bool {
			return clients[i].EvalSha(rctx, releaseSHA, []string{key}, val).Err() == nil
		})
		cancel()
		return cycleErr("goredis", granted, released, n)
	}
}

// autoPipelineCycler: go-redis's AsyncAutoPipeline with its default options, one
// client per master. A queued command does not honour its context's deadline
// (autopipeline.go, "Per-command contexts"), so the node timeout is the clients'
// ReadTimeout and WriteTimeout; no retries (a timed-out batch is otherwise sent
// again whole).
func autoPipelineCycler(tb testing.TB, addrs []string, hooks *atomic.Int64) cycler {
	return autoPipelineCyclerWith(tb, addrs, hooks, nil, 0)
}

// autoPipelineRL1Cycler is autoPipelineCycler carrying a value as long as this
// project's lock value (rl1.<token>.<owner>, DESIGN.md section 4) instead of a
// 20-byte token: the masters' work on the same cycle with the same bytes. Past 44
// bytes a master keeps a string in two allocations instead of one.
func autoPipelineRL1Cycler(tb testing.TB, addrs []string, hooks *atomic.Int64) cycler {
	l, err := benchManager(tb, addrs).TryAcquire(context.Background(), "bench:rl1-length", benchTTL)
	if err != nil {
		tb.Fatal(err)
	}
	n := len(l.Token())
	if err := l.Release(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return autoPipelineCyclerWith(tb, addrs, hooks, nil, n)
}

// autoPipelineCyclerWith is autoPipelineCycler with tweak applied to each client's
// options (Options.AutoPipelineOptions, say), and its values padded to length
// bytes (0: a token as it is).
func autoPipelineCyclerWith(tb testing.TB, addrs []string, hooks *atomic.Int64, tweak func(*redis.Options), length int) cycler {
	aps := make([]*redis.AutoPipeliner, len(addrs))
	for i, a := range addrs {
		opt := &redis.Options{Addr: a, MaxRetries: -1, ReadTimeout: benchNodeTimeout, WriteTimeout: benchNodeTimeout,
			OnConnect: goredisOnConnect(hooks)}
		if tweak != nil {
			tweak(opt)
		}
		c := redis.NewClient(opt)
		tb.Cleanup(func() { _ = c.Close() })
		if err := loadReleaseScript(c); err != nil {
			tb.Fatal(err)
		}
		ap, err := c.AsyncAutoPipeline()
		if err != nil {
			tb.Fatal(err)
		}
		aps[i] = ap
	}
	token, n := tokens(), len(aps)
	if length > 0 {
		pad := strings.Repeat("x", length)
		short := token
		token = func() string { v := short(); return v + pad[min(len(v), len(pad)):] }
	}
	return func(ctx context.Context, key string) error {
		val := token()
		keys := []string{key}
		sets := make([]*redis.BoolCmd, n)
		for i, ap := range aps {
			sets[i] = ap.SetNX(ctx, key, val, benchTTL)
		}
		granted := 0
		for _, c := range sets {
			if ok, err := c.Result(); err == nil && ok {
				granted++
			}
		}
		evals := make([]*redis.Cmd, n)
		for i, ap := range aps {
			evals[i] = ap.EvalSha(ctx, releaseSHA, keys, val)
		}
		released := 0
		for _, c := range evals {
			if c.Err() == nil {
				released++
			}
		}
		return cycleErr("goredis-autopipeline", granted, released, n)
	}
}

// rueidisDial is the rueidis prototypes' dialler: rueidis has no hook on a new
// connection, so the INFO server the restart quarantine needs is read here, on the
// raw connection, before rueidis's own handshake (HELLO, AUTH) runs on it. With
// ACLs the hook would have to AUTH itself first.
func rueidisDial(hooks *atomic.Int64) func(ctx context.Context, addr string, d *net.Dialer, cfg *tls.Config) (net.Conn, error) {
	return func(ctx context.Context, addr string, d *net.Dialer, cfg *tls.Config) (net.Conn, error) {
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		if cfg != nil {
			conn = tls.Client(conn, cfg)
		}
		if hooks != nil {
			hooks.Add(1)
		}
		if dl, ok := ctx.Deadline(); ok {
			_ = conn.SetDeadline(dl)
		}
		_, err = conn.Write(appendCommand(nil, "INFO", "server"))
		if err == nil {
			// Nothing else is on the wire yet, so the reader cannot take bytes
			// beyond this reply.
			_, err = readReply(bufio.NewReader(conn))
		}
		if err != nil {
			_ = conn.Close()
			return nil, fmt.Errorf("INFO server on a new connection: %w", err)
		}
		_ = conn.SetDeadline(time.Time{})
		return conn, nil
	}
}

// rueidisCycler: one rueidis client per master with its defaults for
// auto-pipelining (2^log2(GOMAXPROCS), at most 4, connections per master, each
// command on the connection its key hashes to; no flush delay), client-side
// caching and retries off, per-round deadlines by context, and ConnWriteTimeout at
// the node timeout (with the 1 s keep-alive ping, how long a silent master's
// connection is kept).
func rueidisCycler(tb testing.TB, addrs []string, hooks *atomic.Int64) cycler {
	return rueidisCyclerWith(tb, addrs, hooks, nil)
}

// rueidisTunedCycler is rueidisCycler with one connection per master (so all
// goroutines' commands to a master share one pipeline) and a flush delay of 20 µs
// (ClientOption.MaxFlushDelay: the writer waits for more commands before the
// next write), the settings that made rueidis fastest here at 64 and 256
// goroutines.
func rueidisTunedCycler(tb testing.TB, addrs []string, hooks *atomic.Int64) cycler {
	return rueidisCyclerWith(tb, addrs, hooks, func(o *rueidis.ClientOption) {
		o.PipelineMultiplex = -1
		o.MaxFlushDelay = 20 * time.Microsecond
	})
}

// rueidisCyclerWith is rueidisCycler with tweak applied to each client's options.
func rueidisCyclerWith(tb testing.TB, addrs []string, hooks *atomic.Int64, tweak func(*rueidis.ClientOption)) cycler {
	clients := make([]rueidis.Client, len(addrs))
	for i, a := range addrs {
		opt := rueidis.ClientOption{
			InitAddress: []string{a}, ForceSingleClient: true, DisableCache: true, DisableRetry: true,
			ConnWriteTimeout: benchNodeTimeout, DialCtxFn: rueidisDial(hooks),
		}
		if tweak != nil {
			tweak(&opt)
		}
		c, err := rueidis.NewClient(opt)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(c.Close)
		if err := c.Do(context.Background(), c.B().ScriptLoad().Script(floorRelease).Build()).Error(); err != nil {
			tb.Fatal(err)
		}
		clients[i] = c
	}
	token, n := tokens(), len(clients)
	ttl := benchTTL.Milliseconds()
	return func(ctx context.Context, key string) error {
		val := token()
		rctx, cancel := context.WithTimeout(ctx, benchNodeTimeout)
		granted := fanOut(n, func(i int) bool {
			c := clients[i]
			return c.Do(rctx, c.B().Set().Key(key).Value(val).Nx().PxMilliseconds(ttl).Build()).Error() == nil
		})
		cancel()
		rctx, cancel = context.WithTimeout(ctx, benchNodeTimeout)
		released := fanOut(n, func(i int) bool {
			c := clients[i]
			err := c.Do(rctx, c.B().Evalsha().Sha1(releaseSHA).Numkeys(1).Key(key).Arg(val).Build()).Error()
			return err == nil || errors.Is(err, rueidis.Nil)
		})
		cancel()
		return cycleErr("rueidis", granted, released, n)
	}
}

// TestPrototypeCycles checks that each prototype runs a real cycle: granted and
// released on every master, its new-connection hook run, and no grant nor
// release of a key another owner holds on a majority.
func TestPrototypeCycles(t *testing.T) {
	c := redistest.Start(t, 5, redistest.Options{})
	ctx := context.Background()
	for _, p := range prototypes {
		t.Run(p.name, func(t *testing.T) {
			var hooks atomic.Int64
			cyc := p.make(t, c.Addrs(), &hooks)
			key := "proto:" + p.name
			require.NoError(t, cyc(ctx, key))
			require.NoError(t, cyc(ctx, key), "the first cycle released the key")
			for _, s := range c.Servers {
				assert.Zero(t, s.Client().Exists(ctx, key).Val(), "released on %s", s.Name)
			}
			assert.GreaterOrEqual(t, hooks.Load(), int64(len(c.Servers)), "the hook ran on every new connection")

			for _, s := range c.Servers[:3] {
				require.NoError(t, s.Client().Set(ctx, key, "other", time.Minute).Err())
			}
			require.Error(t, cyc(ctx, key), "a key held on a majority is not granted")
			for _, s := range c.Servers[:3] {
				assert.Equal(t, "other", s.Client().Get(ctx, key).Val(), "another owner's key is not released on %s", s.Name)
			}
			for _, s := range c.Servers[3:] {
				assert.Zero(t, s.Client().Exists(ctx, key).Val(), "the minority's grants are released on %s", s.Name)
			}
		})
	}
}
