package admin_test

import (
	"context"
	"testing"
	"time"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/quorum"
)

// BenchmarkActions measures an administrator's actions on one held lock over
// three masters, each with its lock taken again outside the timer: the time and
// the allocations of the action alone.
//
//	go test ./admin -run '^$' -bench Actions -benchmem -benchtime 2000x
func BenchmarkActions(b *testing.B) {
	c := redistest.Start(b, 3, redistest.Options{})
	nodes := make([]quorum.Node, len(c.Servers))
	for i, s := range c.Servers {
		nodes[i] = quorum.Node{Name: s.Name, Addr: s.Addr()}
	}
	m, err := quorum.New(nodes, quorum.WithRestartQuarantine(0))
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	a := admin.New(m)
	ctx := context.Background()
	actions := []struct {
		name  string
		do    func(l *quorum.Lock) error
		after bool // the lock is still held after the action: force-expired outside the timer
	}{
		{"force-expire", func(*quorum.Lock) error { _, err := a.ForceExpire(ctx, "bench", ""); return err }, false},
		{"force-expire-token", func(l *quorum.Lock) error { _, err := a.ForceExpire(ctx, "bench", l.Token()); return err }, false},
		{"release-token", func(l *quorum.Lock) error { _, err := a.ReleaseToken(ctx, "bench", l.Token()); return err }, false},
		{"extend-token", func(l *quorum.Lock) error {
			_, _, err := a.ExtendToken(ctx, "bench", l.Token(), time.Minute)
			return err
		}, true},
	}
	for _, act := range actions {
		b.Run(act.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				b.StopTimer()
				l, err := m.TryAcquire(ctx, "bench", time.Minute)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if err := act.do(l); err != nil {
					b.Fatal(err)
				}
				if act.after {
					b.StopTimer()
					if _, err := a.ForceExpire(ctx, "bench", ""); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
			}
		})
	}
}
