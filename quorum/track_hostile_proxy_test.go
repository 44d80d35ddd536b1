package quorum

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// invalidatePush returns a RESP3 invalidation push naming keys.
func invalidatePush(keys ...string) []byte {
	b := fmt.Appendf(nil, ">2\r\n$10\r\ninvalidate\r\n*%d\r\n", len(keys))
	for _, k := range keys {
		b = fmt.Appendf(b, "$%d\r\n%s\r\n", len(k), k)
	}
	return b
}

// hostileTracking are bytes a hostile or broken path injects into every
// tracking connection of the loss watch, between two writes of the master.
var hostileTracking = []struct {
	name  string
	bytes func(key string) []byte
	every time.Duration // repeated so often for a second
	split bool          // the master's own bytes are passed on one at a time meanwhile
}{
	{"pushes naming other keys", func(string) []byte { return invalidatePush("other", "lock:x") }, 2 * time.Millisecond, false},
	{"pushes naming the watched key", func(k string) []byte { return invalidatePush(k) }, 2 * time.Millisecond, false},
	{"null pushes", func(string) []byte { return []byte(">2\r\n$10\r\ninvalidate\r\n_\r\n") }, 2 * time.Millisecond, false},
	{"a push of 10,000 keys", func(string) []byte {
		ks := make([]string, 10000)
		for i := range ks {
			ks[i] = "lock:k" + strconv.Itoa(i)
		}
		return invalidatePush(ks...)
	}, 50 * time.Millisecond, false},
	{"keys past 512 bytes", func(string) []byte { return invalidatePush(strings.Repeat("k", 600), strings.Repeat("\r\n", 400)) }, 2 * time.Millisecond, false},
	{"other pushes", func(string) []byte { return []byte(">3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$1\r\nm\r\n>1\r\n_\r\n>0\r\n") }, 2 * time.Millisecond, false},
	{"attributes alone", func(string) []byte { return []byte("|1\r\n+key-popularity\r\n%1\r\n$1\r\na\r\n,0.1\r\n") }, 2 * time.Millisecond, false},
	{"pushes between the master's bytes", func(k string) []byte { return invalidatePush(k) }, 2 * time.Millisecond, true},
	{"replies to no command", func(string) []byte { return []byte("$-1\r\n_\r\n:0\r\n") }, 10 * time.Millisecond, false},
	{"a bulk string cut short, held open", func(string) []byte { return []byte("$100\r\nabc") }, 300 * time.Millisecond, false},
	{"garbage", func(string) []byte { return []byte("?what\r\n") }, 10 * time.Millisecond, false},
	{"aggregates too deep", func(string) []byte { return []byte(strings.Repeat(">1\r\n", 20) + "_\r\n") }, 10 * time.Millisecond, false},
	{"an aggregate too long", func(string) []byte { return []byte("*2000000\r\n") }, 10 * time.Millisecond, false},
}

var clientLines = regexp.MustCompile(`(?m)^id=`)

// connsOn returns how many clients the master of cl has connected.
func connsOn(t *testing.T, cl *redis.Client) int {
	t.Helper()
	out, err := cl.ClientList(context.Background()).Result()
	require.NoError(t, err)
	return len(clientLines.FindAllString(out, -1))
}

// readsOn returns how many GET and EXISTS the master of cl has run.
func readsOn(t *testing.T, cl *redis.Client) int {
	t.Helper()
	out, err := cl.Info(context.Background(), "commandstats").Result()
	require.NoError(t, err)
	n := 0
	for _, cmd := range []string{"get", "exists"} {
		if m := regexp.MustCompile(`cmdstat_` + cmd + `:calls=(\d+)`).FindStringSubmatch(out); m != nil {
			c, _ := strconv.Atoi(m[1])
			n += c
		}
	}
	return n
}

// TestAttackLossWatchHostileTrackingBytes: whatever reaches a running loss
// watch's tracking connections on every master (pushes naming other keys or
// none, huge or long-keyed pushes, attributes, replies to no command, a bulk
// string cut short then held open, garbage, the master's bytes one at a time
// with pushes between them), repeated for a second: the holder hears no loss
// while every master holds its value; afterwards a real loss on two masters of
// three is heard within a few seconds; no connection or goroutine is left
// behind; and the masters are not read in a hot loop.
func TestAttackLossWatchHostileTrackingBytes(t *testing.T) {
	for _, tc := range hostileTracking {
		t.Run(tc.name, func(t *testing.T) {
			c := redistest.Start(t, 3, redistest.Options{})
			proxies := make([]*trackProxy, len(c.Servers))
			for i, s := range c.Servers {
				proxies[i] = newTrackProxy(t, s.Addr())
			}
			m := managerVia(t, c, func(i int, n *Node) { n.Dialer = proxies[i].dial })
			ctx := context.Background()
			l, err := m.Acquire(ctx, "hostile", time.Minute, WithLossWatch())
			require.NoError(t, err)
			armed(t, m, l)
			require.NoError(t, l.Verify(ctx)) // its own connections: dialled before the count
			key := l.watchKeys()[0]
			conns := make([]int, len(c.Servers))
			reads := make([]int, len(c.Servers))
			clients := make([]*redis.Client, len(c.Servers))
			for i, s := range c.Servers {
				clients[i] = s.Client()
				conns[i], reads[i] = connsOn(t, clients[i]), readsOn(t, clients[i])
			}
			goroutines := runtime.NumGoroutine()

			b := tc.bytes(key)
			for _, p := range proxies {
				p.split.Store(tc.split)
			}
			injected := 0
			for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(tc.every) {
				for _, p := range proxies {
					injected += p.inject(b)
				}
				select {
				case <-l.Done():
					t.Fatalf("Done fired with the lock held on every master: %v", l.Err())
				default:
				}
			}
			for _, p := range proxies {
				p.split.Store(false)
			}
			time.Sleep(trackPoll) // a tick: pings, reads and verifications the flood caused
			select {
			case <-l.Done():
				t.Fatalf("Done fired with the lock held on every master: %v", l.Err())
			default:
			}
			require.NoError(t, l.Verify(ctx))
			read := 0
			for i := range c.Servers {
				read += readsOn(t, clients[i]) - reads[i]
			}
			t.Logf("%d injections, %d reads on the masters in %v", injected, read, time.Second+trackPoll)
			// A read per injection at most, and a read of every key per
			// reconnection: no loop of reads of its own.
			require.Less(t, read, injected+3*int(2*time.Second/trackRetry)+100, "reads in a hot loop")

			armed(t, m, l)
			for i, s := range c.Servers {
				require.Eventually(t, func() bool { return connsOn(t, clients[i]) <= conns[i] }, 5*time.Second, 20*time.Millisecond,
					"connections left on %s: %d, %d before", s.Name, connsOn(t, clients[i]), conns[i])
			}
			require.Eventually(t, func() bool { return runtime.NumGoroutine() <= goroutines+5 }, 5*time.Second, 20*time.Millisecond,
				"goroutines left: %d, %d before", runtime.NumGoroutine(), goroutines)

			for _, cl := range clients[:2] {
				require.NoError(t, cl.Del(ctx, key).Err())
			}
			select {
			case <-l.Done():
				require.True(t, errors.Is(l.Err(), ErrLost), "Err %v", l.Err())
			case <-time.After(5 * time.Second):
				t.Fatalf("the lock deleted from two masters of three: Done silent 5 s later")
			}
		})
	}
}
