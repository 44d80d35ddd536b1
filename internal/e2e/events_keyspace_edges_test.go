package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/faults"
)

// eventsOf returns the events printed for name, as "event value" lines (the value
// redacted as printed), in order.
func (l *eventLog) eventsOf(name string) []string {
	var out []string
	for _, d := range l.all() {
		if d["name"] == name {
			out = append(out, fmt.Sprint(d["event"], " ", d["value"], " ", d["masters"]))
		}
	}
	return out
}

// fastCycle takes key and lets it go again in one transaction on srv: a cycle no
// reader can read the value of (its GET comes after the DEL).
func fastCycle(t *testing.T, srv *redis.Client, key, value string) {
	t.Helper()
	ctx := context.Background()
	_, err := srv.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.SetArgs(ctx, key, value, redis.SetArgs{Mode: "NX", TTL: 5 * time.Second})
		p.Del(ctx, key)
		return nil
	})
	require.NoError(t, err)
}

// Regression: a set whose value could not be read joined "the one acquisition
// reported within the window that its master had not reported yet", whichever
// cycle it belonged to. A holder that had reached one master (the first of its
// round) was then reported as having acquired the lock as soon as another client's
// quick cycle (acquired and released before the masters' GET) went through three
// others: "acquired" for a value one master held, and "released" when those three
// deleted their own copies, while the holder went on to take every master and
// hold the lock. Its real release came as a second "released".
func TestBugEventsUnreadCycleJoinsAnotherHoldersAcquisition(t *testing.T) {
	e := newEnv(t)
	e.keyspaceOn()
	log := collectEvents(t, e)
	ctx := context.Background()
	srv := e.c.Servers
	const key, holder = "lock:ghost", "holder-2-aaaaaaaa"
	// The holder's round reaches master 0 first, and its value is read there.
	require.NoError(t, srv[0].Client().SetArgs(ctx, key, holder, redis.SetArgs{Mode: "NX", TTL: 8 * time.Second}).Err())
	time.Sleep(100 * time.Millisecond)
	// Another client's quick cycle on masters 2, 3 and 4: acquired and released
	// before any GET, so its value is unread on each.
	for _, s := range srv[2:] {
		fastCycle(t, s.Client(), key, "quick-1-bbbbbbbb")
	}
	time.Sleep(500 * time.Millisecond)
	held := len(e.keys(key))
	require.Equal(t, 1, held, "one master holds the holder's value")
	assert.Empty(t, log.eventsOf("ghost"), "nothing was acquired by a quorum: one master holds %q, and no value was set on three", holder)
	// The rest of the holder's round.
	for _, s := range srv[1:] {
		require.NoError(t, s.Client().SetArgs(ctx, key, holder, redis.SetArgs{Mode: "NX", TTL: 8 * time.Second}).Err())
	}
	time.Sleep(1500 * time.Millisecond) // past the merger's window
	require.Len(t, e.keys(key), 5)
	for _, ev := range log.eventsOf("ghost") {
		assert.False(t, strings.HasPrefix(ev, "released"), "released while every master holds the lock: %v", log.eventsOf("ghost"))
	}
	for _, s := range srv {
		require.NoError(t, s.Client().Del(ctx, key).Err())
	}
	time.Sleep(1500 * time.Millisecond)
	n := 0
	for _, ev := range log.eventsOf("ghost") {
		if strings.HasPrefix(ev, "released") {
			n++
		}
	}
	assert.LessOrEqual(t, n, 1, "one release: %v", log.eventsOf("ghost"))
}

// viaProxies returns a copy of e whose topology reaches the masters numbered in
// slow through a proxy each (returned by index), and the others directly.
func viaProxies(t *testing.T, e *env, slow ...int) (*env, map[int]*faults.Proxy) {
	t.Helper()
	cfg, proxies := proxiedConfig(t, e, slow...)
	via := *e
	via.config = cfg
	return &via, proxies
}

// proxiedConfig writes a topology for the same masters as e's, where the masters
// numbered in slow are reached through a proxy each (returned by index).
func proxiedConfig(t *testing.T, e *env, slow ...int) (string, map[int]*faults.Proxy) {
	t.Helper()
	proxies := map[int]*faults.Proxy{}
	var b strings.Builder
	b.WriteString(clusterHead("e2e"))
	for i, s := range e.c.Servers {
		addr := s.Addr()
		for _, j := range slow {
			if i == j {
				proxies[i] = faults.NewProxy(t, s.Addr())
				addr = proxies[i].Addr()
			}
		}
		fmt.Fprintf(&b, "  master %q { address = %q }\n", s.Name, addr)
	}
	b.WriteString("}\n")
	path := filepath.Join(t.TempDir(), "redlock-proxied.hcl")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))
	return path, proxies
}

// Regression: a change of hands waits the grace (150 ms) for a release that lags
// the next holder's sets, and then is printed; the release that comes later still
// was printed too, so the acquisition it ended ended twice (a change of hands, then
// a release). A master's notifications 300 ms late (a retransmitted segment on the
// way to the events reader costs 200 ms or more) are enough, with a lock held on
// three masters (a quorum of 3 of 5 sets).
func TestBugEventsLateReleaseAfterChangeOfHandsEndsTwice(t *testing.T) {
	e := newEnv(t)
	e.keyspaceOn()
	via, proxies := viaProxies(t, e, 0)
	log := collectEvents(t, via)
	ctx := context.Background()
	srv := e.c.Servers
	const key = "lock:late"
	for _, s := range srv[:3] {
		require.NoError(t, s.Client().SetArgs(ctx, key, "first-holder-aaaa", redis.SetArgs{Mode: "NX", TTL: 8 * time.Second}).Err())
	}
	require.Eventually(t, func() bool { return len(log.eventsOf("late")) == 1 }, 10*time.Second, 20*time.Millisecond)
	proxies[0].SetLatency(0, 300*time.Millisecond)
	time.Sleep(50 * time.Millisecond)
	// The first holder releases on its three masters; the next takes four.
	for _, s := range srv[:3] {
		require.NoError(t, s.Client().Del(ctx, key).Err())
	}
	for _, s := range srv[1:] {
		require.NoError(t, s.Client().SetArgs(ctx, key, "second-holder-bbbb", redis.SetArgs{Mode: "NX", TTL: 8 * time.Second}).Err())
	}
	time.Sleep(1500 * time.Millisecond)
	evs := log.eventsOf("late")
	ends := 0
	for _, ev := range evs[1:] {
		if strings.HasPrefix(ev, "released first") || strings.HasPrefix(ev, "changed-hands") {
			ends++
		}
	}
	assert.Equal(t, 1, ends, "the first holder's acquisition ends once: %v", evs)
}

// Regression: a force-expire announces itself on the lock's wake-up channel, and
// the merger marks the name until a release comes to take it. When what was
// deleted was no acquisition (a stale copy on one master, which `locks` shows), the
// mark stayed, and the next holder's ordinary release, minutes later, was printed as
// a force-expire.
func TestBugEventsForceExpireOfALeftoverMarksTheNextRelease(t *testing.T) {
	e := newEnv(t)
	e.keyspaceOn()
	log := collectEvents(t, e)
	ctx := context.Background()
	require.NoError(t, e.c.Servers[0].Client().Set(ctx, "lock:stale", "leftover-aaaaaaaa", 8*time.Second).Err())
	time.Sleep(100 * time.Millisecond)
	r := e.run("force-expire", "stale", "-yes", "-now")
	require.Equal(t, 0, r.code, r.stderr)
	time.Sleep(1500 * time.Millisecond)
	r = e.run("run", "stale", "--", "true")
	require.Equal(t, 0, r.code, r.stderr)
	require.Eventually(t, func() bool { return len(log.eventsOf("stale")) >= 2 }, 10*time.Second, 20*time.Millisecond)
	time.Sleep(300 * time.Millisecond)
	evs := log.eventsOf("stale")
	require.Len(t, evs, 2, "%v", evs)
	assert.True(t, strings.HasPrefix(evs[0], "acquired"), "%v", evs)
	assert.True(t, strings.HasPrefix(evs[1], "released"), "an ordinary release: %v", evs)
}

// Regression: `force-expire NAME -token T` deleted by compare-and-delete with the
// release script, which announces a release (the key), not a force-expire: the
// event stream printed "released" for an administrator's force-expire.
func TestBugEventsForceExpireByTokenPrintedAsARelease(t *testing.T) {
	e := newEnv(t)
	e.keyspaceOn()
	log := collectEvents(t, e)
	tok := e.acquireToken("bytoken", "-ttl", "8s")
	require.Eventually(t, func() bool { return len(log.eventsOf("bytoken")) == 1 }, 10*time.Second, 20*time.Millisecond)
	r := e.run("force-expire", "bytoken", "-token", tok, "-yes", "-now")
	require.Equal(t, 0, r.code, r.stderr)
	require.Eventually(t, func() bool { return len(log.eventsOf("bytoken")) == 2 }, 10*time.Second, 20*time.Millisecond)
	evs := log.eventsOf("bytoken")
	assert.True(t, strings.HasPrefix(evs[1], "force-expired"), "%v", evs)
}

// Regression: a holder that won exactly three masters, one of whose
// notifications reach the events reader 150 ms late, is released after 400 ms and
// the next holder takes the four others. The first acquisition's quorum of reports was
// complete only after the next holder's: it was printed as a change of hands over
// the next holder (who took the lock after it), then released, and the next
// holder's extension as an extension of a lock not held.
func TestBugEventsLateAcquisitionPrintedAsAChangeOfHands(t *testing.T) {
	e := newEnv(t)
	e.keyspaceOn()
	via, proxies := viaProxies(t, e, 2)
	log := collectEvents(t, via)
	proxies[2].SetLatency(0, 150*time.Millisecond)
	ctx := context.Background()
	srv := e.c.Servers
	const key = "lock:reorder"
	set := func(i int, v string) {
		require.NoError(t, srv[i].Client().SetArgs(ctx, key, v, redis.SetArgs{Mode: "NX", TTL: 8 * time.Second}).Err())
	}
	for _, i := range []int{4, 0, 2} {
		set(i, "first-holder-aaaa")
	}
	time.Sleep(400 * time.Millisecond) // long enough for the late master to read it (its GET and PING take 300 ms)
	for _, i := range []int{4, 0, 2} {
		require.NoError(t, srv[i].Client().Del(ctx, key).Err())
	}
	for _, i := range []int{0, 3, 4, 1} {
		set(i, "next-holder-bbbb")
	}
	time.Sleep(500 * time.Millisecond)
	for _, i := range []int{0, 3, 4, 1} {
		require.NoError(t, srv[i].Client().PExpire(ctx, key, 9*time.Second).Err())
	}
	time.Sleep(1500 * time.Millisecond)
	evs := log.eventsOf("reorder")
	t.Logf("%v", evs)
	for _, ev := range evs {
		assert.False(t, strings.HasPrefix(ev, "changed-hands"), "no lock changed hands: %v", evs)
	}
	require.NotEmpty(t, evs)
	assert.True(t, strings.HasPrefix(evs[len(evs)-1], "extended next"), "the next holder holds the lock and extended it: %v", evs)
}

// Regression: an extension that reaches each master just before that master's
// delete (a keep-alive's round in flight as the holder releases), and a master
// that saw only the delete: the extension's quorum of reports completes after the
// release's, and "extended" was printed after "released".
func TestBugEventsExtensionPrintedAfterTheRelease(t *testing.T) {
	e := newEnv(t)
	e.keyspaceOn()
	log := collectEvents(t, e)
	ctx := context.Background()
	srv := e.c.Servers
	const key = "lock:extrel"
	for _, s := range srv {
		require.NoError(t, s.Client().SetArgs(ctx, key, "holder-aaaaaaaa", redis.SetArgs{Mode: "NX", TTL: 8 * time.Second}).Err())
	}
	require.Eventually(t, func() bool { return len(log.eventsOf("extrel")) == 1 }, 10*time.Second, 20*time.Millisecond)
	require.NoError(t, srv[0].Client().Del(ctx, key).Err())
	time.Sleep(5 * time.Millisecond)
	for _, s := range srv[1:] {
		_, err := s.Client().Pipelined(ctx, func(p redis.Pipeliner) error {
			p.PExpire(ctx, key, 9*time.Second)
			p.Del(ctx, key)
			return nil
		})
		require.NoError(t, err)
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(1500 * time.Millisecond)
	evs := log.eventsOf("extrel")
	require.NotEmpty(t, evs)
	assert.True(t, strings.HasPrefix(evs[len(evs)-1], "released"), "nothing after the release: %v", evs)
}

// A revocation is a "revoked" event of the holder (keyspace mode: the
// tombstone's SET over the holder's value), not an acquisition of the tombstone.
func TestEventsKeyspaceShowsARevocation(t *testing.T) {
	e := newEnv(t)
	e.keyspaceOn()
	log := collectEvents(t, e)
	e.acquireToken("rvk", "-ttl", "8s")
	require.Eventually(t, func() bool { return len(log.eventsOf("rvk")) == 1 }, 10*time.Second, 20*time.Millisecond)
	r := e.run("force-expire", "rvk", "-yes")
	require.Equal(t, 6, r.code, r.stderr)
	require.Eventually(t, func() bool { return len(log.eventsOf("rvk")) >= 2 }, 10*time.Second, 20*time.Millisecond)
	time.Sleep(300 * time.Millisecond)
	evs := log.eventsOf("rvk")
	require.Len(t, evs, 2, "%v", evs)
	assert.True(t, strings.HasPrefix(evs[1], "revoked"), "%v", evs)
}
