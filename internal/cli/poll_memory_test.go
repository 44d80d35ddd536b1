package cli

import (
	"context"
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/connect"
	"github.com/redlock/redlock/quorum"
)

// pollMemory is what one poll costs: the bytes it allocated while it ran (a bound
// of its peak) and those it still holds once the garbage is collected.
type pollMemory struct{ allocated, retained uint64 }

// measurePoll runs poll (warmed up once) and measures it; poll returns what the
// caller keeps until the next poll.
func measurePoll(poll func() any) pollMemory {
	_ = poll()
	var m0, m1, m2 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	kept := poll()
	runtime.ReadMemStats(&m1)
	runtime.GC()
	runtime.ReadMemStats(&m2)
	runtime.KeepAlive(kept)
	return pollMemory{allocated: m1.TotalAlloc - m0.TotalAlloc, retained: m2.HeapAlloc - min(m2.HeapAlloc, m0.HeapAlloc)}
}

// The exporter's and `events`' polls stream the listing: what a poll allocates
// grows by at most 1,000 bytes per lock on 3 masters (the listing's compact
// table and reading, against some 1,200 bytes per lock for a whole Listing
// alone), what the exporter keeps between polls does not grow with the locks
// (its gauges), and what `events` keeps grows by at most 500 bytes per held lock
// (its name, value and deadline; about 320). Measured at 10,000 and 40,000
// locks.
func TestPollMemoryIsBoundedPerLock(t *testing.T) {
	if testing.Short() {
		t.Skip("fills 40,000 locks on 3 masters")
	}
	rc, c := consoleCluster(t, 3)
	m, err := connect.Manager(c)
	require.NoError(t, err)
	defer m.Close()
	s := &lockSession{cluster: c, m: m, redact: func(s string) string { return s }}
	ctx := context.Background()
	l, err := m.TryAcquire(ctx, "poll/0", 5*time.Minute, quorum.WithLockOwner("nightly"))
	require.NoError(t, err)
	parts := strings.SplitN(l.Token(), ".", 3)
	filled := 1
	fill := func(n int) {
		for _, srv := range rc.Servers {
			pipe := srv.Client().Pipeline()
			for i := filled; i < n; i++ {
				tok := sha1.Sum([]byte(fmt.Sprint(i)))
				pipe.Set(ctx, fmt.Sprintf("lock:poll/%06d", i), parts[0]+"."+base64.RawURLEncoding.EncodeToString(tok[:])+"."+parts[2], time.Hour)
			}
			_, err := pipe.Exec(ctx)
			require.NoError(t, err)
		}
		filled = n
	}
	polls := map[string]func() any{
		"exporter": func() any {
			a, err := s.lockMetrics(ctx, c)
			require.NoError(t, err)
			return a
		},
		"events": func() any {
			h, _, err := s.pollHeld(ctx, "*")
			require.NoError(t, err)
			return h
		},
	}
	const small, large = 10000, 40000
	got := map[string][2]pollMemory{}
	for i, n := range []int{small, large} {
		fill(n)
		for _, name := range []string{"exporter", "events", "exporter"} {
			pm := measurePoll(polls[name])
			r := got[name]
			r[i] = pm
			got[name] = r
			t.Logf("%s at %d locks: allocated %d bytes (%d per lock), retained %d", name, n, pm.allocated, pm.allocated/uint64(n), pm.retained)
		}
	}
	h, _, err := s.pollHeld(ctx, "*")
	require.NoError(t, err)
	require.Equal(t, large, h.Len(), "every lock is held")
	for name, r := range got {
		perLock := float64(r[1].allocated-min(r[1].allocated, r[0].allocated)) / (large - small)
		assert.Less(t, perLock, 1000.0, "%s: allocated per lock", name)
	}
	assert.Less(t, float64(got["exporter"][1].retained), float64(got["exporter"][0].retained)+64<<10, "the exporter keeps its gauges only")
	keptPerLock := float64(got["events"][1].retained-min(got["events"][1].retained, got["events"][0].retained)) / (large - small)
	assert.Less(t, keptPerLock, 500.0, "events: kept per held lock")
}
