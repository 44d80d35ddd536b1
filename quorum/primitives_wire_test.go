package quorum

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/defaults"
	"github.com/redlock/redlock/internal/faults"
	"github.com/redlock/redlock/internal/keyspace"
	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/internal/wire"
)

// goRedisScript is s as go-redis runs it (EVALSHA, EVAL after NOSCRIPT): tests
// call a script on one master with it.
func goRedisScript(s *wire.Script) *redis.Script { return redis.NewScript(s.Source()) }

// goRedisScriptFanout is how the primitives ran their scripts before they moved
// to the wire path: go-redis on every master (fanout), Int64 replies. Kept here
// as the reference scriptOnAll must agree with.
func (m *Manager) goRedisScriptFanout(ctx context.Context, op, key string, s *wire.Script, keys []string, out func(i int, r int64) (Outcome, error), args ...string) *Report {
	script := goRedisScript(s)
	argv := make([]any, len(args))
	for i, a := range args {
		argv[i] = a
	}
	return m.fanout(ctx, op, key, func(ctx context.Context, n *node) (Outcome, error) {
		r, err := script.Run(ctx, n.client, keys, argv...).Int64()
		switch {
		case err != nil:
			return OutcomeError, err
		case out != nil:
			return out(m.nodeIndex(n), r)
		}
		return outcomeOf(r), nil
	})
}

// TestPrimitiveScriptsOnTheWireMatchGoRedis runs every script of the primitives'
// rounds through the wire path (scriptOnAll) and through go-redis, from the same
// state of four masters (nothing, our value, another's value, a foreign HASH on
// every key), and expects the same outcome per master, the same error class
// (WRONGTYPE matches ErrWrongType on both) and the same keys left.
func TestPrimitiveScriptsOnTheWireMatchGoRedis(t *testing.T) {
	c := redistest.Start(t, 4, redistest.Options{})
	m := managerFor(t, c)
	ctx := context.Background()
	const ours = "rl1.ours"
	states := []string{"free", "ours", "theirs", "hash"}
	setup := func(t *testing.T, keys []string) {
		for i, s := range c.Servers {
			cl := s.Client()
			require.NoError(t, cl.Del(ctx, keys...).Err())
			for _, k := range keys {
				switch states[i] {
				case "ours":
					require.NoError(t, cl.Set(ctx, k, ours, time.Minute).Err())
				case "theirs":
					require.NoError(t, cl.Set(ctx, k, "rl1.theirs", time.Minute).Err())
				case "hash":
					require.NoError(t, cl.HSet(ctx, k, "token", ours).Err())
				}
			}
		}
	}
	semOut := func(_ int, r int64) (Outcome, error) {
		if r >= 0 {
			return OutcomeOK, nil
		}
		return OutcomeForeign, nil
	}
	term := func(_ int, r int64) (Outcome, error) { return raised(r, 7) }
	tests := []struct {
		name   string
		script *wire.Script
		keys   []string
		out    func(int, int64) (Outcome, error)
		args   []string
	}{
		{"sem_acquire", semAcquireScript, []string{"s:permit:0", "s:permit:1", "s:permit:queue"}, semOut, []string{ours, "60000", "", "", "0", "0"}},
		{"sem_acquire fair", semAcquireScript, []string{"s:permit:0", "s:permit:1", "s:permit:queue"}, semOut, []string{ours, "60000", "wait", "w1", "5", "1000"}},
		{"permit release", releaseW, []string{"s:permit:0", "s:permit:queue"}, nil, []string{ours, "s:permit:wake"}},
		{"multi_acquire", multiAcquireScript, []string{"m1", "m2"}, granted, []string{ours, "60000"}},
		{"multi_extend", multiExtendScript, []string{"m1", "m2"}, nil, []string{ours, "90000"}},
		{"multi_release", multiReleaseScript, []string{"m1", "m2"}, released, []string{ours, "1"}},
		{"shared_acquire", sharedAcquireScript, []string{"r", "r:xwait"}, granted, []string{ours, "60000"}},
		{"shared_extend", sharedExtendScript, []string{"r"}, nil, []string{ours, "90000"}},
		{"shared_release", sharedReleaseScript, []string{"r"}, nil, []string{ours, "r:wake"}},
		{"xwait_mark", xwaitMarkScript, []string{"r", "r:xwait"}, nil, []string{ours, "1000"}},
		{"xwait clear", multiReleaseScript, []string{"r:xwait"}, released, []string{ours, "1", "r:wake"}},
		{"elect_term", electTermScript, []string{"e:leader", "e:leader:fence", "e:leader:term"}, term, []string{ours, "7", "123", "v", "e:leader:wake"}},
		{"elect_proclaim", electProclaimScript, []string{"e:leader", "e:leader:term"}, nil, []string{ours, "w", "e:leader:wake", "3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			setup(t, tt.keys)
			want := m.goRedisScriptFanout(ctx, "op", tt.keys[0], tt.script, tt.keys, tt.out, tt.args...)
			wantKeys := dumpKeys(t, c, tt.keys)
			setup(t, tt.keys)
			got := m.scriptOnAll(ctx, "op", tt.keys[0], tt.script, tt.keys, tt.out, tt.args...)
			assert.Equal(t, outcomes(want), outcomes(got), "outcomes per master (%v)", states)
			for i := range got.Nodes {
				w, g := want.Nodes[i], got.Nodes[i]
				assert.Equal(t, w.Node, g.Node, "declared order")
				assert.Equal(t, w.Err == nil, g.Err == nil, "%s: go-redis %v, wire %v", states[i], w.Err, g.Err)
				assert.Equal(t, errors.Is(w.Err, ErrWrongType), errors.Is(g.Err, ErrWrongType), "%s: go-redis %v, wire %v", states[i], w.Err, g.Err)
				assert.Equal(t, errors.Is(w.Err, errFenceStale), errors.Is(g.Err, errFenceStale), "%s: go-redis %v, wire %v", states[i], w.Err, g.Err)
			}
			assert.Equal(t, want.Votes, got.Votes)
			assert.Equal(t, wantKeys, dumpKeys(t, c, tt.keys), "keys left")
		})
	}
}

// dumpKeys describes keys on every master: type and contents (a sorted set's
// members without their scores, which are times).
func dumpKeys(t *testing.T, c *redistest.Cluster, keys []string) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	for _, s := range c.Servers {
		cl := s.Client()
		for _, k := range keys {
			typ := cl.Type(ctx, k).Val()
			var v any
			switch typ {
			case "string":
				v = cl.Get(ctx, k).Val()
			case "hash":
				h := cl.HGetAll(ctx, k).Val()
				delete(h, "since")
				v = h
			case "zset":
				v = cl.ZRange(ctx, k, 0, -1).Val()
			}
			out = append(out, fmt.Sprintf("%s %s %s %v", s.Name, k, typ, v))
		}
	}
	return out
}

// primitiveCycle takes and gives back one hold of each primitive (and a plain
// lock) under names prefixed by p, and returns the reports of every round.
type primitiveCycle struct {
	name    string
	acquire func(ctx context.Context, m *Manager, p string) (*Lock, error)
}

var primitiveCycles = []primitiveCycle{
	{"semaphore", func(ctx context.Context, m *Manager, p string) (*Lock, error) {
		return m.TryAcquire(ctx, p+"sem", 5*time.Second, withPermits(2))
	}},
	{"multi", func(ctx context.Context, m *Manager, p string) (*Lock, error) {
		return m.tryMulti(ctx, []string{p + "x", p + "y", p + "z"}, 5*time.Second)
	}},
	{"shared", func(ctx context.Context, m *Manager, p string) (*Lock, error) {
		return m.TryAcquire(ctx, p+"rw", 5*time.Second, withShared())
	}},
	{"election", func(ctx context.Context, m *Manager, p string) (*Lock, error) {
		e, err := m.Election(p + "job")
		if err != nil {
			return nil, err
		}
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		ld, err := e.Campaign(cctx, "me", 5*time.Second)
		if err != nil {
			return nil, err
		}
		if err := ld.Proclaim(ctx, "you"); err != nil {
			return nil, err
		}
		return ld.Lock, nil
	}},
}

// TestAttackPrimitivesWireMasterFrozenMidRound: one master of five is frozen
// (DEBUG SLEEP) while each primitive's rounds have their commands written on its
// connection: every round ends within the node timeout (plus scheduling slack)
// with that master counted as failed, and once it wakes, its late replies are
// never read as a later round's (every master votes again, the keys are exactly
// the primitive's own). Then the master is killed and restarted without its data
// (its script cache empty: EVAL after NOSCRIPT) and every primitive works on all
// five again.
func TestAttackPrimitivesWireMasterFrozenMidRound(t *testing.T) {
	c := redistest.Start(t, 5, redistest.Options{})
	m := managerFor(t, c)
	ctx := context.Background()
	const timeout = 200 * time.Millisecond // managerFor's node timeout
	frozen := c.Servers[0]
	for _, pc := range primitiveCycles {
		t.Run(pc.name, func(t *testing.T) {
			l, err := pc.acquire(ctx, m, "f1-")
			require.NoError(t, err)
			const sleep = 6 * timeout
			require.NoError(t, faults.DebugSleep(ctx, frozen, sleep))
			woken := time.Now().Add(sleep)
			t0 := time.Now()
			_, ext, err := l.extendRound(ctx, 5*time.Second)
			require.NoError(t, err, "extended on the four awake masters")
			assert.Less(t, time.Since(t0), timeout+150*time.Millisecond, "the round ended at the node timeout")
			assert.Equal(t, 4, ext.Votes)
			assert.Equal(t, OutcomeError, ext.Nodes[0].Outcome, "the frozen master")
			// A second hold is taken and given back on the four.
			t0 = time.Now()
			l3, err := pc.acquire(ctx, m, "f3-")
			require.NoError(t, err)
			assert.Equal(t, 4, l3.Votes().Votes)
			if err := l3.Release(ctx); err != nil {
				require.ErrorIs(t, err, ErrPartialRelease, "released on the four")
			}
			assert.Less(t, time.Since(t0), 4*(timeout+150*time.Millisecond), "each round ended at the node timeout")
			time.Sleep(time.Until(woken) + timeout) // it wakes and answers what it read
			// The next rounds read their own replies on every master.
			_, ext, err = l.extendRound(ctx, 5*time.Second)
			require.NoError(t, err)
			assert.Equal(t, 5, ext.Votes, "the frozen master's late reply was not taken for this round's")
			require.NoError(t, l.Release(ctx))
			l2, err := pc.acquire(ctx, m, "f1-")
			require.NoError(t, err, "taken again at once: the release reached every master")
			assert.Equal(t, 5, l2.Votes().Votes)
			require.NoError(t, l2.Release(ctx))
		})
	}
	faults.KillRestart(frozen, 0, false)
	for _, pc := range primitiveCycles {
		t.Run(pc.name+"/after restart", func(t *testing.T) {
			require.EventuallyWithT(t, func(ct *assert.CollectT) {
				l, err := pc.acquire(ctx, m, "f2-")
				if !assert.NoError(ct, err) {
					return
				}
				defer func() { _ = l.Release(ctx) }()
				assert.Equal(ct, 5, l.Votes().Votes, "the restarted master votes (its script cache empty)")
			}, 5*time.Second, 50*time.Millisecond)
		})
	}
	assertNothingLeft(t, c, "lock:f*")
}

// assertNothingLeft checks that no key matching pattern is left on any master but
// the counters and election records, which have no TTL.
func assertNothingLeft(t *testing.T, c *redistest.Cluster, pattern string) {
	t.Helper()
	for _, s := range c.Servers {
		keys, err := s.Client().Keys(context.Background(), pattern).Result()
		require.NoError(t, err)
		keys = slices.DeleteFunc(keys, func(k string) bool {
			kc := keyspace.ClassifyKey(strings.TrimPrefix(k, defaults.KeyPrefix), "")
			return kc.Kind == keyspace.KeyFence || kc.Kind == keyspace.KeyTerm
		})
		assert.Empty(t, keys, "%s: nothing left but the counters and election records", s.Name)
	}
}

// TestExclusiveMarkerCutByCancellationIsCleared: the round that sets an exclusive
// waiter's writer-waiting marker is cut by a cancellation after its commands
// reached the masters (their replies slowed down): no master answered, yet the
// marker is set on every one. The waiter's clean-up must delete it rather than
// leave it to keep new shared holders out for its whole TTL. (On the wire path a
// cancellation ends a round at once; before the fix clear ran only where a master
// had answered the mark.)
func TestExclusiveMarkerCutByCancellationIsCleared(t *testing.T) {
	a := newAtk(t, 3, redistest.Options{})
	m := a.client("x")
	ctx := context.Background()
	sh, err := m.TryAcquire(ctx, "rw", 5*time.Second, withShared())
	require.NoError(t, err)
	defer func() { _ = sh.Release(ctx) }()
	_, err = m.TryAcquire(ctx, "rw", 5*time.Second)
	require.ErrorIs(t, err, ErrHeld, "the exclusive round meets the shared holders")

	// Once uncut (the masters learn the scripts: no NOSCRIPT below).
	x := m.markExclusive(ctx, nil, m.Key("rw"), err)
	require.True(t, x.marked)
	x.clear(ctx, m)

	a.net.Each("x", func(p *faults.Proxy) { p.SetLatency(0, 150*time.Millisecond) })
	cctx, cancel := context.WithTimeout(ctx, time.Second)
	time.AfterFunc(50*time.Millisecond, cancel) // after the commands arrived, before a reply
	x = m.markExclusive(cctx, nil, m.Key("rw"), err)
	require.NotNil(t, x)
	time.Sleep(150 * time.Millisecond)
	a.net.Each("x", func(p *faults.Proxy) { p.SetLatency(0, 0) })
	for _, s := range a.c.Servers {
		require.Equal(t, x.value, s.Client().Get(ctx, "lock:rw:xwait").Val(), "%s: the mark took effect", s.Name)
	}
	time.Sleep(200 * time.Millisecond) // the late replies are read and dropped
	x.clear(ctx, m)
	for _, s := range a.c.Servers {
		assert.Zero(t, s.Client().Exists(ctx, "lock:rw:xwait").Val(), "%s: marker cleared", s.Name)
	}
}

// hostileMaster is a fake master on a loopback port: it refuses INFO and answers
// every other command with reply (a reply no script of ours gives).
func hostileMaster(t *testing.T, reply string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			cn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer func() { _ = cn.Close() }()
				rd := bufio.NewReader(cn)
				for {
					args, err := readCommand(rd)
					if err != nil {
						return
					}
					out := reply
					if strings.EqualFold(args[0], "INFO") {
						out = "-ERR unknown command\r\n"
					}
					if _, err := cn.Write([]byte(out)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// readCommand reads one RESP command (an array of bulk strings).
func readCommand(rd *bufio.Reader) ([]string, error) {
	line, err := rd.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "*")))
	if err != nil || n < 1 {
		return nil, fmt.Errorf("not a command: %q", line)
	}
	args := make([]string, n)
	for i := range args {
		line, err := rd.ReadString('\n') // $len
		if err != nil {
			return nil, err
		}
		size, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "$")))
		if err != nil || size < 0 {
			return nil, fmt.Errorf("not a bulk string: %q", line)
		}
		b := make([]byte, size+2) // a script's body has lines of its own
		if _, err := io.ReadFull(rd, b); err != nil {
			return nil, err
		}
		args[i] = string(b[:size])
	}
	return args, nil
}

// TestAttackPrimitivesHostileReplies: one master of five answers the primitives'
// scripts with replies they never give (a bulk string, an array, a status, an
// error reply carrying terminal escapes, bytes that are not RESP). Every
// primitive is taken, extended and given back on the four real masters; the
// hostile one is a failed master in every round (never a vote, never a hang past
// the node timeout), and its error text reaches the report unchanged for the
// printing layer to escape.
func TestAttackPrimitivesHostileReplies(t *testing.T) {
	replies := map[string]string{
		"bulk string":           "$5\r\nhello\r\n",
		"array":                 "*2\r\n:1\r\n:1\r\n",
		"status":                "+OK\r\n",
		"error with escapes":    "-ERR \x1b]0;owned\x07\r\n",
		"not RESP":              "hello\r\n",
		"integer then garbage":  ":1x\r\n",
		"bulk string too short": "$10\r\nab\r\n",
	}
	c := redistest.Start(t, 4, redistest.Options{})
	ctx := context.Background()
	for name, reply := range replies {
		t.Run(name, func(t *testing.T) {
			nodes := []Node{{Name: "hostile", Addr: hostileMaster(t, reply)}}
			for _, s := range c.Servers {
				nodes = append(nodes, Node{Name: s.Name, Addr: s.Addr()})
			}
			m, err := New(nodes, WithRestartQuarantine(0), WithNodeTimeout(200*time.Millisecond))
			require.NoError(t, err)
			t.Cleanup(func() { _ = m.Close() })
			for _, pc := range primitiveCycles {
				t0 := time.Now()
				l, err := pc.acquire(ctx, m, "h-")
				require.NoError(t, err, pc.name)
				got := l.Votes()
				if pc.name != "election" || reply != "+OK\r\n" { // +OK grants a leadership's plain SET NX
					assert.Equal(t, 4, got.Votes, pc.name)
					assert.Equal(t, OutcomeError, got.Nodes[0].Outcome, "%s: the hostile master never votes", pc.name)
				}
				if strings.HasPrefix(reply, "-") {
					assert.Contains(t, got.Nodes[0].Err.Error(), "ERR \x1b]0;owned\x07", pc.name)
				}
				_, ext, err := l.extendRound(ctx, 5*time.Second)
				require.NoError(t, err, pc.name)
				assert.Equal(t, 4, ext.Votes, pc.name)
				assert.Equal(t, OutcomeError, ext.Nodes[0].Outcome, pc.name)
				if err := l.Release(ctx); err != nil {
					require.ErrorIs(t, err, ErrPartialRelease, pc.name)
				}
				assert.Less(t, time.Since(t0), 10*time.Second, pc.name)
			}
			assertNothingLeft(t, c, "lock:h-*")
		})
	}
}
