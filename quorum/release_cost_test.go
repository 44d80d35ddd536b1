package quorum

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock/redlock/internal/redistest"
)

// releaseVariants are the scripts BenchmarkReleaseScriptCost compares: where the
// release script's time on a master goes, command by command.
// short variants are sent as Lock.Release sends release.lua for a plain lock
// (its key and value only), the others with the long form's queue key and
// wake-up channel.
var releaseVariants = []struct {
	name, src string
	short     bool
}{
	{"compare-and-delete", `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`, true},
	{"release.lua-short", releaseLua, true},
	{"get+del", `local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 elseif v == false then return 0 end
return -1`, false},
	{"get+del+exists", `local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then redis.call('DEL', KEYS[1]) redis.call('EXISTS', KEYS[2]) return 1 elseif v == false then return 0 end
return -1`, false},
	{"get+del+publish", `local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then redis.call('DEL', KEYS[1]) redis.call('PUBLISH', ARGV[2], KEYS[1]) return 1 elseif v == false then return 0 end
return -1`, false},
	{"get+del+exists+publish", `local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then redis.call('DEL', KEYS[1]) redis.call('EXISTS', KEYS[2]) redis.call('PUBLISH', ARGV[2], KEYS[1]) return 1 elseif v == false then return 0 end
return -1`, false},
	{"release.lua-before", withWakeHead(releaseBeforeSrc), false},
	{"release.lua", releaseLua, false},
}

// releaseBeforeSrc is release.lua as it was before the waiter markers (it
// published on every release that deleted the key), for the comparison.
const releaseBeforeSrc = `-- Compare-and-delete. KEYS[1] lock key; KEYS[2] (optional) its fair queue key (<lock key>:queue); ARGV[1] our
-- value; ARGV[2] wake-up channel ("" for none).
-- Returns 1 deleted (ours), 0 missing, -1 someone else's. A non-string key raises WRONGTYPE.
-- Where it deleted, it wakes the waiters: only the head of the fair queue KEYS[2] when a live waiter is queued
-- there (wakeHead), else every waiter (the lock key, published on the channel).
-- include: wake_head.lua (prune and wakeHead, shared with the other scripts that wake the head)
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then
  redis.call('DEL', KEYS[1])
  if ARGV[2] ~= '' then
    local woken = false
    if KEYS[2] and redis.call('EXISTS', KEYS[2]) == 1 then
      prune(KEYS[2])
      woken = wakeHead(ARGV[2], KEYS[1], KEYS[2])
    end
    if not woken then
      redis.call('PUBLISH', ARGV[2], KEYS[1])
    end
  end
  return 1
elseif v == false then
  return 0
end
return -1
`

// extendVariants are the extension scripts BenchmarkReleaseScriptCost compares.
var extendVariants = []struct{ name, src string }{
	{"extend.lua", extendLua},
	{"get+pexpire-gt", `local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then
  if redis.call('PEXPIRE', KEYS[1], ARGV[2], 'GT') == 0 and redis.call('PTTL', KEYS[1]) == -1 then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
  end
  return 1
elseif v == false then return 0 end
return -1`},
}

// BenchmarkReleaseScriptCost measures, on one real redis-server, what each
// release variant costs the master per call (usec_per_call of EVALSHA in INFO
// commandstats, the key set by a SET just before, nobody subscribed to the wake
// channel), each variant run in turn several times and the median kept:
//
//	go test ./quorum -run '^$' -bench ReleaseScriptCost -benchtime 1x
func BenchmarkReleaseScriptCost(b *testing.B) {
	ctx := context.Background()
	srv := redistest.StartOne(b, "cost", redistest.Options{})
	c := srv.Client()
	const rounds = 7
	const value = "value-0123456789abcdef"
	costs := map[string][]float64{}
	for range rounds {
		for _, v := range releaseVariants {
			costs[v.name] = append(costs[v.name], scriptCost(b, c, v.src, func(p redis.Pipeliner, sha, k string) {
				p.Set(ctx, k, value, 0)
				if v.short {
					p.EvalSha(ctx, sha, []string{k}, value)
				} else {
					p.EvalSha(ctx, sha, []string{k, k + ":queue"}, value, k+":wake")
				}
			}))
		}
		for _, v := range extendVariants {
			costs[v.name] = append(costs[v.name], scriptCost(b, c, v.src, func(p redis.Pipeliner, sha, k string) {
				p.Set(ctx, k, value, time.Second)
				p.EvalSha(ctx, sha, []string{k}, value, 30000)
			}))
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "\nEVALSHA usec_per_call, median of %d runs of %d calls (min-max):\n", rounds, costCalls)
	names := []string{}
	for _, v := range releaseVariants {
		names = append(names, v.name)
	}
	for _, v := range extendVariants {
		names = append(names, v.name)
	}
	for _, name := range names {
		cs := costs[name]
		slices.Sort(cs)
		fmt.Fprintf(&sb, "  %-26s %5.2f  (%.2f-%.2f)\n", name, cs[len(cs)/2], cs[0], cs[len(cs)-1])
		b.ReportMetric(cs[len(cs)/2], name+"-µs/call")
	}
	b.Log(sb.String())
}

// costCalls is how many calls of a script scriptCost makes.
const costCalls = 60000

// scriptCost runs src costCalls times on c from four pipelining goroutines, each
// call queued by fill after what it needs (a SET of the key), and returns
// EVALSHA's usec_per_call.
func scriptCost(b *testing.B, c *redis.Client, src string, fill func(p redis.Pipeliner, sha, key string)) float64 {
	ctx := context.Background()
	const workers, batch = 4, 100
	sha, err := c.ScriptLoad(ctx, src).Result()
	if err != nil {
		b.Fatal(err)
	}
	if err := c.FlushAll(ctx).Err(); err != nil { // no queue key left by another variant
		b.Fatal(err)
	}
	if err := c.ConfigResetStat(ctx).Err(); err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := 0; i < costCalls/workers; i += batch {
				_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
					for j := range batch {
						fill(p, sha, "cost:"+strconv.Itoa(w)+":"+strconv.Itoa(j))
					}
					return nil
				})
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return usecPerCall(b, c, "evalsha")
}

// usecPerCall reads usec_per_call of cmd from INFO commandstats.
func usecPerCall(tb testing.TB, c *redis.Client, cmd string) float64 {
	s, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(s, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+cmd+":")
		if !ok {
			continue
		}
		for _, f := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(f, "usec_per_call="); ok {
				x, err := strconv.ParseFloat(v, 64)
				if err != nil {
					tb.Fatal(err)
				}
				return x
			}
		}
	}
	tb.Fatalf("no cmdstat_%s in INFO commandstats", cmd)
	return 0
}

// BenchmarkCycleCommandCost cycles TryAcquire + Release on distinct keys from 64
// goroutines over five real masters and reports what the masters spent per
// cycle in commands (the sum of usec over INFO commandstats, all masters) and
// per call of each command (EVALSHA is the release):
//
//	go test ./quorum -run '^$' -bench CycleCommandCost -benchtime 40000x
func BenchmarkCycleCommandCost(b *testing.B) {
	ctx := context.Background()
	c := redistest.Start(b, 5, redistest.Options{})
	nodes := make([]Node, len(c.Servers))
	clients := make([]*redis.Client, len(c.Servers))
	for i, s := range c.Servers {
		nodes[i] = Node{Name: s.Name, Addr: s.Addr()}
		clients[i] = s.Client()
	}
	m, err := New(nodes, WithRestartQuarantine(0), WithNodeTimeout(2*time.Second))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = m.Close() })
	const g = 64
	cycle := func(key string) error {
		l, err := m.TryAcquire(ctx, key, 10*time.Second)
		if err != nil {
			return err
		}
		return l.Release(ctx)
	}
	for i := range g { // warm the connections
		if err := cycle("cost:" + strconv.Itoa(i)); err != nil {
			b.Fatal(err)
		}
	}
	for _, cl := range clients {
		if err := cl.ConfigResetStat(ctx).Err(); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	var next atomic.Int64
	var wg sync.WaitGroup
	for i := range g {
		wg.Go(func() {
			key := "cost:" + strconv.Itoa(i)
			for next.Add(1) <= int64(b.N) {
				if err := cycle(key); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	var total float64
	per := map[string][2]float64{} // command: calls, usec
	for _, cl := range clients {
		for cmd, st := range commandStats(b, cl) {
			if cmd == "config" || cmd == "info" {
				continue
			}
			total += st[1]
			p := per[cmd]
			per[cmd] = [2]float64{p[0] + st[0], p[1] + st[1]}
		}
	}
	b.ReportMetric(total/float64(b.N), "cmd-µs/cycle")
	for cmd, p := range per {
		if p[0] > 0 {
			b.ReportMetric(p[1]/p[0], cmd+"-µs/call")
		}
	}
}

// commandStats returns calls and usec of every command in INFO commandstats.
func commandStats(tb testing.TB, c *redis.Client) map[string][2]float64 {
	s, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string][2]float64{}
	for _, line := range strings.Split(s, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_")
		if !ok {
			continue
		}
		cmd, fields, _ := strings.Cut(rest, ":")
		var st [2]float64
		for _, f := range strings.Split(fields, ",") {
			k, v, _ := strings.Cut(f, "=")
			x, _ := strconv.ParseFloat(v, 64)
			switch k {
			case "calls":
				st[0] = x
			case "usec":
				st[1] = x
			}
		}
		out[cmd] = st
	}
	return out
}
