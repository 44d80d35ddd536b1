package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/faults"
	"github.com/redlock/redlock/quorum"
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
	r := e.run("force-expire", "stale", "-yes")
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
	r := e.run("force-expire", "bytoken", "-token", tok, "-yes")
	require.Equal(t, 0, r.code, r.stderr)
	require.Eventually(t, func() bool { return len(log.eventsOf("bytoken")) == 2 }, 10*time.Second, 20*time.Millisecond)
	evs := log.eventsOf("bytoken")
	assert.True(t, strings.HasPrefix(evs[1], "force-expired"), "%v", evs)
}

// busyLoops starts n processes that spin until the test ends: the events reader
// competes for the CPU with them.
func busyLoops(t *testing.T, n int) {
	t.Helper()
	for range n {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	}
}

// Attack: the events binary beside two busy loops, while clients of this library
// contend for three names (glob characters and colons in one) with holds of 0-20
// ms, extensions and releases, a redsync-style client takes a fourth name, and a
// plain single-master SET NX client and a client writing a huge value under a name
// with control characters add noise. Every event printed is checked against what
// the clients did: an acquisition of a value that was acquired, at most once; an
// extension of a value that was extended, while reported held; a release or
// expiry once, after its acquisition; a change of hands only where the noise
// client's DEL broke a holder's quorum ("hot").
func TestAttackEventsContendedNamesUnderLoad(t *testing.T) {
	e := newEnv(t)
	e.keyspaceOn()
	busyLoops(t, 2)
	log := collectEvents(t, e)
	ctx := context.Background()
	nodes := make([]quorum.Node, len(e.c.Servers))
	for i, s := range e.c.Servers {
		nodes[i] = quorum.Node{Name: s.Name, Addr: s.Addr()}
	}
	type truth struct {
		mu       sync.Mutex
		acquired map[string]string // redacted value -> name
		extended map[string]bool
	}
	tr := &truth{acquired: map[string]string{}, extended: map[string]bool{}}
	names := []string{"hot", "a*b:[c]", "ext"}
	deadline := time.Now().Add(5 * time.Second)
	var wg sync.WaitGroup
	for _, name := range names {
		for range 3 {
			// A generous node timeout: a round that fails only by a late reply on
			// this loaded machine would leave partial clean-ups to expire.
			m, err := quorum.New(nodes, quorum.WithRestartQuarantine(0), quorum.WithNodeTimeout(time.Second), quorum.WithRetry(200, 5*time.Millisecond, 5*time.Millisecond))
			require.NoError(t, err)
			t.Cleanup(func() { _ = m.Close() })
			wg.Go(func() {
				for i := 0; time.Now().Before(deadline); i++ {
					l, err := m.Acquire(ctx, name, 2*time.Second)
					if err != nil {
						continue
					}
					tr.mu.Lock()
					tr.acquired[quorum.Redact(l.Token())] = name
					tr.mu.Unlock()
					time.Sleep(time.Duration(i%20) * time.Millisecond)
					if name == "ext" && i%2 == 0 {
						// An extension the client counted as failed (replies later than
						// the node timeout on this loaded machine) may still have reached
						// a quorum: the masters did extend.
						tr.mu.Lock()
						tr.extended[quorum.Redact(l.Token())] = true
						tr.mu.Unlock()
						_ = l.Extend(ctx, 3*time.Second)
						time.Sleep(time.Duration(i%7) * time.Millisecond)
					}
					_ = l.Release(ctx)
				}
			})
		}
	}
	wg.Go(func() { // redsync-style
		f := e.foreignLock("lock:peer", 2*time.Second)
		for time.Now().Before(deadline) {
			if f.Lock() == nil {
				tr.mu.Lock()
				tr.acquired[quorum.Redact(f.value)] = "peer"
				tr.mu.Unlock()
				time.Sleep(5 * time.Millisecond)
				_, _ = f.Unlock()
			}
		}
	})
	wg.Go(func() { // noise: one master only, and a hostile name with a huge value on two
		huge := strings.Repeat("\x1b[2J", 1<<18)
		for i := 0; time.Now().Before(deadline); i++ {
			c := e.c.Servers[i%5].Client()
			_ = c.SetArgs(ctx, "lock:hot", fmt.Sprint("single-", i), redis.SetArgs{Mode: "NX", TTL: time.Second}).Err()
			_ = e.c.Servers[i%2].Client().Set(ctx, "lock:evil\x1b]0;x\a\n", huge, 500*time.Millisecond).Err()
			time.Sleep(3 * time.Millisecond)
			_ = c.Del(ctx, "lock:hot").Err() // may delete a lock client's key: that client's release reports it
		}
	})
	wg.Wait()
	// Quiescence: the count stops moving.
	last := -1
	require.Eventually(t, func() bool {
		n := len(log.all())
		settled := n == last
		last = n
		return settled
	}, 30*time.Second, 1500*time.Millisecond)
	held := map[string]string{} // name -> value reported held
	ended := map[string]bool{}
	seen := map[string]bool{}
	counts := map[string]int{}
	for _, d := range log.all() {
		name, _ := d["name"].(string)
		value, _ := d["value"].(string)
		kind, _ := d["event"].(string)
		counts[kind]++
		// The waiters (three per name) keep a queue key and a waiting flag beside
		// the lock: bookkeeping, never a lock of its own.
		assert.False(t, strings.HasSuffix(name, ":queue"), "%s of a waiter's bookkeeping key %q", kind, name)
		if strings.HasPrefix(name, "evil") {
			continue // a value of 1 MB on two masters: never a quorum
		}
		switch kind {
		case "acquired", "changed-hands":
			if kind == "changed-hands" {
				assert.Equal(t, "hot", name, "only the noise client's DEL breaks a holder's quorum")
			}
			if tr.acquired[value] == "" {
				// A round that set a quorum of masters and failed anyway (a reply later
				// than the node timeout on this loaded machine): true of the masters,
				// released by the round's clean-up.
				t.Logf("%s of %q by a failed round: %s %v", kind, name, value, d["masters"])
			} else {
				assert.Equal(t, name, tr.acquired[value], "%s of %q by %s, which acquired another name", kind, name, value)
			}
			assert.False(t, seen[value], "%s acquired twice", value)
			seen[value] = true
			if kind == "acquired" && name != "hot" {
				assert.Empty(t, held[name], "%q acquired by %s while %s is reported held", name, value, held[name])
			}
			held[name] = value
		case "extended":
			assert.True(t, tr.extended[value], "%q: %s never extended", name, value)
			assert.Equal(t, value, held[name], "%q: an extension of %s, not reported held", name, value)
		case "released", "expired":
			assert.True(t, seen[value], "%q: %s %s without its acquisition", name, value, kind)
			assert.False(t, ended[value], "%q: %s ended twice", name, value)
			ended[value] = true
			if held[name] == value {
				held[name] = ""
			}
		default:
			t.Errorf("unexpected %s of %q", kind, name)
		}
	}
	if counts["changed-hands"] > 0 {
		all := log.all()
		for i, d := range all {
			if d["event"] == "changed-hands" {
				for _, x := range all[max(0, i-6):min(len(all), i+3)] {
					t.Logf("around a change of hands: %v %v %v %v %v", x["time"], x["event"], x["name"], x["value"], x["masters"])
				}
			}
		}
	}
	t.Logf("events: %v; acquisitions by the clients: %d", counts, len(tr.acquired))
	assert.Positive(t, counts["acquired"])
	assert.Positive(t, counts["extended"])
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
