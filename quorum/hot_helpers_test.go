package quorum

import (
	"context"
	"net"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock/redlock/internal/wire"
	"github.com/redlock/redlock/internal/wire/wiretest"
	"github.com/redlock/redlock/quorum/observe"
)

// fairAcquireScript runs fair_acquire.lua through go-redis, for the tests that
// call the script alone.
var fairAcquireScript = redis.NewScript(fairAcquireLua)

// extendScript runs extend.lua through go-redis, for the tests that call it alone.
var extendScript = redis.NewScript(extendLua)

// releaseScript runs release.lua through go-redis, for the tests that call it alone.
var releaseScript = redis.NewScript(releaseLua)

// wireCmd names a hot command for the tests that send one round of it.
type wireCmd uint8

const (
	wireSet     wireCmd = iota // SET key value NX PX num
	wireRelease                // release.lua key value: quiet when str is "", else a plain lock's
	wireExtend                 // extend.lua key value num
)

// wireRound runs one hot command on every master as one round of the Manager's
// transport, as acquire, release and extend send it.
func (m *Manager) wireRound(ctx context.Context, op, key string, cmd wireCmd, value, str string, num int64) *Report {
	switch cmd {
	case wireSet:
		return m.setRound(ctx, key, value, num)
	case wireRelease:
		if str == "" { // releaseQuiet's command, on every master
			c := m.getCall()
			c.keys[0] = key
			c.args[0], c.args[1] = value, ""
			return m.scriptRound(ctx, op, key, releaseW, c, 1, 2, decodeInt)
		}
		return m.release(ctx, op, key, value)
	}
	return m.extendRound(ctx, op, key, value, num)
}

// useGoRedis sends m's hot commands through go-redis (the second wire.Rounder)
// instead of the pipelined transport, on m's own go-redis clients (their
// handshake runs the restart quarantine).
func useGoRedis(m *Manager) *Manager {
	_ = m.tr.Close()
	m.tr = goRedisRounder(m, nil)
	return m
}

// goRedisRounder returns a go-redis Rounder over m's masters: m's own clients, or
// new ones made with opts when opts is not nil.
func goRedisRounder(m *Manager, opts func(i int) *redis.Options) *wiretest.GoRedis {
	g := &wiretest.GoRedis{Timeout: m.cfg.nodeTimeout}
	for i, n := range m.nodes {
		c := n.client
		if opts != nil {
			c = redis.NewClient(opts(i))
		}
		g.Clients = append(g.Clients, c)
	}
	return g
}

// useForgetful sends m's hot commands through wiretest.Forgetful, a pipeline that
// reads a late reply as the next command's (a mutant).
func useForgetful(m *Manager, nodes []Node) {
	_ = m.tr.Close()
	f := &wiretest.Forgetful{Timeout: m.cfg.nodeTimeout}
	for _, n := range nodes {
		f.Dial = append(f.Dial, func(ctx context.Context) (net.Conn, error) {
			if n.Dialer != nil {
				return n.Dialer(ctx, "tcp", n.Addr)
			}
			var d net.Dialer
			return d.DialContext(ctx, "tcp", n.Addr)
		})
	}
	m.tr = f
}

// connStats is an Observer that counts, per master, the connections dropped and
// the late replies thrown away.
type connStats struct {
	mu      sync.Mutex
	dropped map[string]int
	late    map[string]int
}

func newConnStats() *connStats {
	return &connStats{dropped: map[string]int{}, late: map[string]int{}}
}

// Observe implements Observer.
func (s *connStats) Observe(e observe.Event) {
	if e.Kind != observe.EventConnDropped && e.Kind != observe.EventLateReply {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch e.Kind {
	case observe.EventConnDropped:
		s.dropped[e.Master]++
	case observe.EventLateReply:
		s.late[e.Master]++
	}
}

// Dropped returns the connections dropped to master ("": all masters).
func (s *connStats) Dropped(master string) int { return s.sum(s.dropped, master) }

// Late returns the late replies of master ("": all masters).
func (s *connStats) Late(master string) int { return s.sum(s.late, master) }

func (s *connStats) sum(m map[string]int, master string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if master != "" {
		return m[master]
	}
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// wrapRounder replaces m's transports (the hot commands' and Lock.Verify's
// reads') with ones that rewrite each command before sending it and each result
// after (a mutant of the commands the algorithm sends).
func wrapRounder(m *Manager, rewrite func(cmd *wire.Cmd) (*wire.Cmd, func(*wire.Result))) {
	m.tr = &rewriter{inner: m.tr, rewrite: rewrite}
	m.reads = &rewriter{inner: m.reads, rewrite: rewrite}
}

type rewriter struct {
	inner   wire.Rounder
	rewrite func(cmd *wire.Cmd) (*wire.Cmd, func(*wire.Result))
}

func (r *rewriter) Round(ctx context.Context, cmd *wire.Cmd, out []wire.Result) {
	c, fix := r.rewrite(cmd)
	if c == nil { // dropped: every master "answers" as if done
		for i := range out {
			out[i] = wire.Result{Type: ':', Int: 1}
		}
		return
	}
	r.inner.Round(ctx, c, out)
	if fix != nil {
		for i := range out {
			fix(&out[i])
		}
	}
}

func (r *rewriter) Close() error { return r.inner.Close() }

// lagRounder makes its clock lag by the duration of every round (a mutant: the
// validity then counts from the replies, not from the first send).
type lagRounder struct {
	inner wire.Rounder
	clk   *lagClock
}

func (r *lagRounder) Round(ctx context.Context, cmd *wire.Cmd, out []wire.Result) {
	t0 := time.Now()
	r.inner.Round(ctx, cmd, out)
	r.clk.lag.Add(int64(time.Since(t0)))
}

func (r *lagRounder) Close() error { return r.inner.Close() }

// withGoRedisHot marks a Manager's options: the test helpers that make Managers
// (managerFor, testCluster, tlsManager) then send its hot commands through go-redis
// (useGoRedis). It configures nothing by itself.
func withGoRedisHot() Option { return goRedisMarker }

var goRedisMarker Option = func(*config) {}

// goRedisAsked reports whether opts hold withGoRedisHot.
func goRedisAsked(opts []Option) bool {
	for _, o := range opts {
		if reflect.ValueOf(o).Pointer() == reflect.ValueOf(goRedisMarker).Pointer() {
			return true
		}
	}
	return false
}

// sentLog is what recordSent saw: a copy of each command m's transport sent.
type sentLog struct {
	mu   sync.Mutex
	cmds []wire.Cmd
}

// recordSent makes m's transport log a copy of each command it sends.
func recordSent(m *Manager) *sentLog {
	log := &sentLog{}
	wrapRounder(m, func(cmd *wire.Cmd) (*wire.Cmd, func(*wire.Result)) {
		c := *cmd
		c.Args, c.Keys, c.Only = slices.Clone(cmd.Args), slices.Clone(cmd.Keys), slices.Clone(cmd.Only)
		log.mu.Lock()
		log.cmds = append(log.cmds, c)
		log.mu.Unlock()
		return cmd, nil
	})
	return log
}

// matching returns the commands sent that match.
func (l *sentLog) matching(match func(c *wire.Cmd) bool) []wire.Cmd {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []wire.Cmd
	for i := range l.cmds {
		if match(&l.cmds[i]) {
			out = append(out, l.cmds[i])
		}
	}
	return out
}

// ofScript matches the commands that run s.
func ofScript(s *wire.Script) func(c *wire.Cmd) bool {
	return func(c *wire.Cmd) bool { return c.Script == s }
}

// ofCommand matches the plain commands named name.
func ofCommand(name string) func(c *wire.Cmd) bool {
	return func(c *wire.Cmd) bool { return c.Script == nil && len(c.Args) > 0 && c.Args[0] == name }
}

// countRounds counts the rounds m's transport is given that match (every
// master's command of a round counts once).
func countRounds(m *Manager, match func(cmd *wire.Cmd) bool) *atomic.Int32 {
	var n atomic.Int32
	wrapRounder(m, func(cmd *wire.Cmd) (*wire.Cmd, func(*wire.Result)) {
		if match(cmd) {
			n.Add(1)
		}
		return cmd, nil
	})
	return &n
}
