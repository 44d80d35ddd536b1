// Package wiretest is a second wire.Rounder, on go-redis, for tests: the attack
// tests that keep the pipelined transport honest run against both, so that owning
// a client stays a measured decision. Product code never imports it.
package wiretest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock/redlock/internal/wire"
)

// GoRedis is a wire.Rounder that sends each round's command on every client in
// parallel, each under its own deadline of timeout (or ctx's, when sooner). A Cmd
// with NXGet goes as plain SET NX. Close closes nothing: the clients are the
// caller's.
type GoRedis struct {
	Clients []*redis.Client
	Timeout time.Duration
}

var _ wire.Rounder = (*GoRedis)(nil)

// Round implements wire.Rounder.
func (g *GoRedis) Round(ctx context.Context, cmd *wire.Cmd, out []wire.Result) {
	t0 := time.Now()
	nctx, cancel := context.WithTimeout(ctx, g.Timeout)
	defer cancel()
	var wg sync.WaitGroup
	for i, c := range g.Clients {
		if cmd.Only != nil && !cmd.Only[i] {
			out[i] = wire.Result{Err: wire.ErrNotAsked}
			continue
		}
		wg.Go(func() {
			out[i] = do(nctx, c, cmd)
			out[i].Latency = time.Since(t0)
		})
	}
	wg.Wait()
}

// Close implements wire.Rounder; the clients stay open.
func (g *GoRedis) Close() error { return nil }

func do(ctx context.Context, c *redis.Client, cmd *wire.Cmd) wire.Result {
	var rc *redis.Cmd
	if cmd.Script != nil {
		args := make([]any, len(cmd.Args))
		for i, a := range cmd.Args {
			args[i] = a
		}
		rc = c.EvalSha(ctx, cmd.Script.Hash(), cmd.Keys, args...)
		if err := rc.Err(); err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
			rc = c.Eval(ctx, cmd.Script.Source(), cmd.Keys, args...)
		}
	} else {
		args := make([]any, len(cmd.Args))
		for i, a := range cmd.Args {
			args[i] = a
		}
		rc = c.Do(ctx, args...)
	}
	v, err := rc.Result()
	var re redis.Error
	switch {
	case errors.Is(err, redis.Nil):
		return wire.Result{Type: '$', Int: -1}
	case errors.As(err, &re):
		return wire.Result{Type: '-', Str: re.Error(), Err: wire.ErrorReply(re.Error())}
	case err != nil:
		return wire.Result{Err: err}
	}
	return result(v, cmd.Want)
}

// result converts a go-redis reply value.
func result(v any, want string) wire.Result {
	switch v := v.(type) {
	case []any:
		r := wire.Result{Type: '*', Int: int64(len(v)), Array: make([]wire.Result, len(v))}
		for i, e := range v {
			r.Array[i] = result(e, "$")
		}
		return r
	case nil:
		return wire.Result{Type: '$', Int: -1}
	case redis.Error:
		return wire.Result{Type: '-', Str: v.Error(), Err: wire.ErrorReply(v.Error())}
	case int64:
		return wire.Result{Type: ':', Int: v}
	case string:
		// go-redis gives a status reply and a bulk string alike.
		if v == "OK" && (want == "" || strings.Contains(want, "+")) {
			return wire.Result{Type: '+', Str: v}
		}
		return wire.Result{Type: '$', Str: v, Int: int64(len(v))}
	}
	return wire.Result{Err: wire.ErrProtocol}
}
