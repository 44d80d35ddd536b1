package quorum

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock/redlock/internal/redistest"
)

// BenchmarkFairScriptCost measures, on one master alone, what a fair handoff's
// scripts cost the master against the plain commands of the same steps (the
// floor: a SET NX PX, a bare compare-and-delete): EVALSHA's usec_per_call, the
// median of 5 runs of scriptCost's calls.
//
//	go test ./quorum -run '^$' -bench FairScriptCost -benchtime 1x
func BenchmarkFairScriptCost(b *testing.B) {
	ctx := context.Background()
	srv := redistest.StartOne(b, "cost", redistest.Options{})
	c := srv.Client()
	const value, hb = "value-0123456789abcdef", "4000"
	// queue puts two live waiters ahead of ours in k's queue.
	queue := func(p redis.Pipeliner, k string) {
		deadline := float64(time.Now().Add(time.Minute).UnixMilli())
		for i := range 2 {
			id := "w" + strconv.Itoa(i) + ".tag"
			p.ZAdd(ctx, k+queueSuffix, redis.Z{Score: 1795801312499 + float64(i), Member: "q:" + id}, redis.Z{Score: -deadline, Member: "h:" + id})
		}
	}
	fair := func(p redis.Pipeliner, sha, k string) {
		p.EvalSha(ctx, sha, []string{k, k + queueSuffix}, value, 30000, "w9.tag", "1795801312600.000", hb, "wait")
	}
	cases := []struct {
		name string
		src  string
		fill func(p redis.Pipeliner, sha, k string)
	}{
		{"floor: SET NX PX", "return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])", func(p redis.Pipeliner, sha, k string) {
			p.Del(ctx, k)
			p.EvalSha(ctx, sha, []string{k}, value, 30000)
		}},
		{"floor: compare-and-delete", "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0", func(p redis.Pipeliner, sha, k string) {
			p.Set(ctx, k, value, 0)
			p.EvalSha(ctx, sha, []string{k}, value)
		}},
		{"fair round, waiters ahead", fairAcquireLua, func(p redis.Pipeliner, sha, k string) {
			queue(p, k)
			p.Set(ctx, k, "other", 0)
			fair(p, sha, k)
		}},
		{"fair round, the head, held", fairAcquireLua, func(p redis.Pipeliner, sha, k string) {
			p.Set(ctx, k, "other", 0)
			fair(p, sha, k)
		}},
		{"fair round, the head, wins", fairAcquireLua, func(p redis.Pipeliner, sha, k string) {
			p.Del(ctx, k)
			fair(p, sha, k)
		}},
		{"release, wakes the head", releaseLua, func(p redis.Pipeliner, sha, k string) {
			queue(p, k)
			p.Set(ctx, k, value, 0)
			p.Set(ctx, k+waitingSuffix, "1", 0)
			p.EvalSha(ctx, sha, []string{k}, value)
		}},
	}
	costs := map[string][]float64{}
	for range 5 {
		for _, cs := range cases {
			costs[cs.name] = append(costs[cs.name], scriptCost(b, c, cs.src, cs.fill))
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "\nEVALSHA usec_per_call, median of 5 runs of %d calls (min-max):\n", costCalls)
	for _, cs := range cases {
		v := costs[cs.name]
		slices.Sort(v)
		fmt.Fprintf(&sb, "  %-30s %5.2f  (%.2f-%.2f)\n", cs.name, v[len(v)/2], v[0], v[len(v)-1])
	}
	b.Log(sb.String())
}
