package quorum

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// soakDuration is REDLOCK_SOAK (a Go duration) when set, else 45s, and 15s
// under the race detector: the CI runs the soak in its step without it too
// (withoutRace). Its holds are bound by its TTLs and faults, not by the
// processor (15s: 69 holds under the race detector, 38 without, in one run each),
// so the two make the 60s it ran under the race detector alone before.
func soakDuration(t *testing.T) time.Duration {
	if d, ok := soakEnv(t); ok {
		return d
	}
	if raceOn {
		return 15 * time.Second
	}
	return 45 * time.Second
}

// soakEnv returns REDLOCK_SOAK, when set.
func soakEnv(t *testing.T) (time.Duration, bool) {
	v := os.Getenv("REDLOCK_SOAK")
	if v == "" {
		return 0, false
	}
	d, err := time.ParseDuration(v)
	require.NoError(t, err, "REDLOCK_SOAK")
	return d, true
}

// TestNemesisSoak runs four contending clients for the soak duration while a
// seeded nemesis kills and restarts masters (AOF always, so within Redlock's
// model), pauses them, partitions clients from some of them, adds latency and
// loses replies. Two clients hold briefly; two keep their lock alive for up to
// three TTLs, so extensions are in flight when faults strike and validity ends.
// Every holder stops when it sees Done. It ends with a heal and quiescence; the
// checker must find nothing, and the lock must have changed hands.
//
// It runs alone, not in parallel: its five masters (fsync on every write), four
// clients and nemesis take both processors of a 2-core machine under the race
// detector, and tests beside it (the pipeline stress attack, whose node timeouts
// are 10-50 ms; the restart quarantine's) then failed rounds on every master for
// want of a processor: 0 acquisitions in 20 s, in two runs of the package in a row.
func TestNemesisSoak(t *testing.T) {
	s := newScen(t, mutants{}, 5, aofAlways...)
	const ttl = 400 * time.Millisecond
	names := []string{"A", "B", "C", "D"}
	var cls []*client
	for _, n := range names {
		cls = append(cls, s.client(n))
	}
	d := soakDuration(t)
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { nemesis(ctx, s, cls) })
	var got []int
	var kwg sync.WaitGroup
	kwg.Go(func() {
		got = append(got, workers(d, scenLock, ttl, 5*time.Millisecond, cls[:2]...)...)
	})
	kept := make([]int, 2)
	for i, c := range cls[2:] {
		kwg.Go(func() { kept[i] = c.keepAliveWorker(ctx, scenLock, ttl, 3*ttl) })
	}
	kwg.Wait()
	got = append(got, kept...)
	wg.Wait()
	s.net.HealAll()
	s.quiesce(ttl)
	t.Logf("acquisitions per client: %v", got)
	if sum(got) < 10 {
		s.violate("only %d acquisitions in %v", sum(got), d)
	}
	if v := s.rec.Report(t); len(v) == 0 {
		t.Logf("%s", fmt.Sprintf("%d holds, no violation", s.rec.Holds()))
	}
}

// keepAliveWorker takes name with a keep-alive again and again until ctx ends,
// holding it for a random time up to hold or until it sees Done, and releasing it;
// it returns the number of acquisitions.
func (c *client) keepAliveWorker(ctx context.Context, name string, ttl, hold time.Duration) int {
	n := 0
	for ctx.Err() == nil {
		h, err := c.try(ctx, name, ttl, WithKeepAlive(KeepAlive{Fraction: 0.5}))
		if err != nil {
			time.Sleep(time.Duration(1+c.s.intn(5)) * time.Millisecond)
			continue
		}
		n++
		t := time.NewTimer(time.Duration(1+c.s.intn(int(hold/time.Millisecond))) * time.Millisecond)
		select {
		case <-t.C:
		case <-h.l.Done():
		}
		t.Stop()
		_ = h.release(context.Background())
	}
	return n
}
