package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/internal/redistest"
)

// inspectLocks is how many live locks BenchmarkInspect lists.
const inspectLocks = 10000

// BenchmarkInspect: Inspect listing 10,000 live locks on 5 masters (one script
// call per SCAN batch on every master, merged into quorum states), whole and
// streamed.
func BenchmarkInspect(b *testing.B) {
	c := redistest.Start(b, 5, redistest.Options{})
	m := benchManager(b, c.Addrs())
	ctx := context.Background()
	// One real lock gives a value in this project's format; the other 9,999 carry
	// it too, written on every master in pipelines (taking them one by one would
	// only slow the set-up).
	l, err := m.TryAcquire(ctx, "inspect:00000", 5*time.Minute)
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range c.Servers {
		pipe := s.Client().Pipeline()
		for i := 1; i < inspectLocks; i++ {
			pipe.Set(ctx, m.Key(fmt.Sprintf("inspect:%05d", i)), l.Token(), 10*time.Minute)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			b.Fatal(err)
		}
	}
	// inspect: the whole Listing in memory; stream: InspectStream, each lock built
	// as it is iterated and dropped (what `locks` prints from).
	list := map[string]func() (int, error){
		"inspect": func() (int, error) {
			lst, err := admin.New(m).Inspect(ctx, "")
			if err != nil {
				return 0, err
			}
			return len(lst.Locks), nil
		},
		"stream": func() (int, error) {
			_, locks, err := admin.New(m).InspectStream(ctx, "")
			n := 0
			for range locks {
				n++
			}
			return n, err
		},
	}
	for _, name := range []string{"inspect", "stream"} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				n, err := list[name]()
				if err != nil {
					b.Fatal(err)
				}
				if n != inspectLocks {
					b.Fatalf("listed %d locks, want %d", n, inspectLocks)
				}
			}
			per := b.Elapsed() / time.Duration(b.N)
			b.ReportMetric(float64(per.Milliseconds()), "ms/listing")
			b.ReportMetric(float64(inspectLocks)/per.Seconds(), "locks/s")
		})
	}
}
