package quorum

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/redlock/redlock/internal/redistest"
)

// releaseVariants are the scripts BenchmarkReleaseScriptCost compares: where the
// release script's time on a master goes, command by command.
var releaseVariants = []struct{ name, src string }{
	{"get+del", `local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 elseif v == false then return 0 end
return -1`},
	{"get+del+exists", `local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then redis.call('DEL', KEYS[1]) redis.call('EXISTS', KEYS[2]) return 1 elseif v == false then return 0 end
return -1`},
	{"get+del+publish", `local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then redis.call('DEL', KEYS[1]) redis.call('PUBLISH', ARGV[2], KEYS[1]) return 1 elseif v == false then return 0 end
return -1`},
	{"get+del+exists+publish", `local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then redis.call('DEL', KEYS[1]) redis.call('EXISTS', KEYS[2]) redis.call('PUBLISH', ARGV[2], KEYS[1]) return 1 elseif v == false then return 0 end
return -1`},
	{"release.lua", releaseLua},
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
	const rounds, perRound, workers, batch = 7, 60000, 4, 100
	costs := map[string][]float64{}
	for range rounds {
		for _, v := range releaseVariants {
			sha, err := c.ScriptLoad(ctx, v.src).Result()
			if err != nil {
				b.Fatal(err)
			}
			if err := c.ConfigResetStat(ctx).Err(); err != nil {
				b.Fatal(err)
			}
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					for i := 0; i < perRound/workers; i += batch {
						_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
							for j := range batch {
								k := "cost:" + strconv.Itoa(w) + ":" + strconv.Itoa(j)
								p.Set(ctx, k, "value-0123456789abcdef", 0)
								p.EvalSha(ctx, sha, []string{k, k + ":queue"}, "value-0123456789abcdef", k+":wake")
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
			costs[v.name] = append(costs[v.name], usecPerCall(b, c, "evalsha"))
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "\nEVALSHA usec_per_call, median of %d runs of %d calls (min-max):\n", rounds, perRound)
	for _, v := range releaseVariants {
		cs := costs[v.name]
		slices.Sort(cs)
		fmt.Fprintf(&sb, "  %-24s %5.2f  (%.2f-%.2f)\n", v.name, cs[len(cs)/2], cs[0], cs[len(cs)-1])
		b.ReportMetric(cs[len(cs)/2], v.name+"-µs/call")
	}
	b.Log(sb.String())
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
