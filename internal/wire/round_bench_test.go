package wire_test

import (
	"context"
	"testing"
	"time"

	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/internal/wire"
)

// BenchmarkRound runs one round after the other on three real masters: a SET NX
// (the acquisition) and a script (the release), as the lock's hot path sends them.
//
//	go test ./internal/wire -run '^$' -bench Round -benchmem
func BenchmarkRound(b *testing.B) {
	c := redistest.Start(b, 3, redistest.Options{})
	masters := make([]wire.Master, len(c.Servers))
	for i, s := range c.Servers {
		masters[i] = wire.Master{Addr: s.Addr()}
	}
	ps := wire.New(masters, wire.Config{Timeout: 2 * time.Second})
	b.Cleanup(func() { _ = ps.Close() })
	ctx := context.Background()
	release := wire.NewScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`)
	set := &wire.Cmd{Args: []string{"SET", "bench", "v", "NX", "PX", "10000"}, NXGet: true}
	del := &wire.Cmd{Script: release, Keys: []string{"bench"}, Args: []string{"v"}, Want: ":"}
	out := make([]wire.Result, len(masters))
	b.ReportAllocs()
	for b.Loop() {
		for _, cmd := range []*wire.Cmd{set, del} {
			ps.Round(ctx, cmd, out)
			for _, r := range out {
				if r.Err != nil {
					b.Fatal(r.Err)
				}
			}
		}
	}
}
