package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/quorum"
)

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
					tr.acquired[admin.Redact(l.Token())] = name
					tr.mu.Unlock()
					time.Sleep(time.Duration(i%20) * time.Millisecond)
					if name == "ext" && i%2 == 0 {
						// An extension the client counted as failed (replies later than
						// the node timeout on this loaded machine) may still have reached
						// a quorum: the masters did extend.
						tr.mu.Lock()
						tr.extended[admin.Redact(l.Token())] = true
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
				tr.acquired[admin.Redact(f.value)] = "peer"
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
