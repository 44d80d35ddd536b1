package quorum

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// BenchmarkVerify measures Lock.Verify, the read the loss watch decides by, for
// each kind of hold on 5 local masters: the time of one call and its
// allocations (go test ./quorum -run '^$' -bench Verify -benchmem).
func BenchmarkVerify(b *testing.B) {
	ctx := context.Background()
	c := redistest.Start(b, 5, redistest.Options{})
	nodes := make([]Node, len(c.Servers))
	for i, s := range c.Servers {
		nodes[i] = Node{Name: s.Name, Addr: s.Addr()}
	}
	m, err := New(nodes, WithRestartQuarantine(0), WithNodeTimeout(2*time.Second)) // a busy machine's stall is no failure here
	require.NoError(b, err)
	b.Cleanup(func() { _ = m.Close() })
	sem, err := m.Semaphore("bench-verify-sem", 4)
	require.NoError(b, err)
	shared, err := m.Shared("bench-verify-shared")
	require.NoError(b, err)
	multi, err := m.Multi("bench-verify-a", "bench-verify-b", "bench-verify-c")
	require.NoError(b, err)
	kinds := []struct {
		name string
		take func() (*Lock, error)
	}{
		{"lock", func() (*Lock, error) { return m.TryAcquire(ctx, "bench-verify", time.Minute) }},
		{"permit", func() (*Lock, error) {
			p, err := sem.TryAcquire(ctx, time.Minute)
			if err != nil {
				return nil, err
			}
			return p.Lock, nil
		}},
		{"shared", func() (*Lock, error) { return shared.TryAcquire(ctx, time.Minute) }},
		{"multi", func() (*Lock, error) { return multi.TryAcquire(ctx, time.Minute) }},
	}
	for _, k := range kinds {
		b.Run(k.name, func(b *testing.B) {
			l, err := k.take()
			require.NoError(b, err)
			b.Cleanup(func() { _ = l.Release(context.Background()) })
			b.ReportAllocs()
			for b.Loop() {
				if err := l.Verify(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
