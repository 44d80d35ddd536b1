package health

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock/redlock/internal/connect"
	"github.com/redlock/redlock/topology"
)

// watchedSettings are read from every master whether or not the file declares them:
// the rules in Assess need them.
var watchedSettings = []string{"maxmemory-policy", "appendonly", "appendfsync", "enable-debug-command", "save"}

// Prober probes the masters of one cluster. It keeps one small connection pool per
// master across calls (the console probes every second) and remembers each
// master's run_id, so a restart seen between two probes starts a full quarantine.
// It is safe for concurrent use; Close releases the connections.
type Prober struct {
	c       *topology.Cluster
	clients []*redis.Client
	timeout time.Duration
	now     func() time.Time

	mu           sync.Mutex
	runIDs       map[string]string
	restartUntil map[string]time.Time
}

// NewProber returns a Prober for the masters of c, with c.NodeTimeout as the
// deadline of each command (dialling included). It does no I/O: connections are made
// on the first Probe. It fails when a master's TLS files cannot be read.
func NewProber(c *topology.Cluster) (*Prober, error) {
	timeout := c.NodeTimeout
	if timeout <= 0 {
		timeout = topology.DefaultNodeTimeout
	}
	clients, err := connect.Clients(c, timeout)
	if err != nil {
		return nil, fmt.Errorf("health: %w", err)
	}
	return &Prober{
		c: c, clients: clients, timeout: timeout, now: time.Now,
		runIDs: map[string]string{}, restartUntil: map[string]time.Time{},
	}, nil
}

// Cluster returns the cluster the prober was built for.
func (p *Prober) Cluster() *topology.Cluster { return p.c }

// Close closes the connections. The Prober must not be used afterwards.
func (p *Prober) Close() error {
	var errs []error
	for i, cl := range p.clients {
		if err := cl.Close(); err != nil {
			errs = append(errs, fmt.Errorf("master %s: %w", p.c.Masters[i].Name, err))
		}
	}
	return errors.Join(errs...)
}

// Probe probes every master concurrently and returns their health in declared
// order, with Findings and QuarantineUntil filled by Assess. Each master costs
// three round trips (PING, TIME, then INFO and CONFIG GET pipelined), each bounded
// by the node timeout, so a dead master delays the result by about one node timeout
// (dial), never more than three. A cancelled ctx makes the remaining masters report
// unreachable with the context's error. Probe never fails as a whole: every problem
// is a fact or a finding of one master. Errors never contain a password.
func (p *Prober) Probe(ctx context.Context) []topology.NodeHealth {
	out := make([]topology.NodeHealth, len(p.c.Masters))
	var wg sync.WaitGroup
	for i := range p.c.Masters {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			out[i] = p.probeOne(ctx, i)
		}(i)
	}
	wg.Wait()

	window := p.c.QuarantineWindow()
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range out {
		h := &out[i]
		if h.RunID != "" {
			if prev := p.runIDs[h.Master]; prev != "" && prev != h.RunID && window > 0 {
				p.restartUntil[h.Master] = h.CheckedAt.Add(window)
			}
			p.runIDs[h.Master] = h.RunID
		}
		if until, ok := p.restartUntil[h.Master]; ok {
			if h.CheckedAt.Before(until) {
				h.QuarantineUntil = until
			} else {
				delete(p.restartUntil, h.Master)
			}
		}
		Assess(p.c, h, h.CheckedAt)
	}
	return out
}

// probeOne gathers the facts about master i.
func (p *Prober) probeOne(ctx context.Context, i int) topology.NodeHealth {
	m := &p.c.Masters[i]
	cl := p.clients[i]
	h := topology.NodeHealth{Master: m.Name, Address: m.Address, CheckedAt: p.now()}

	// PING: reachability, credentials (go-redis authenticates on connect), latency.
	// One retry when a pooled connection went stale (the master restarted). When no
	// connection is open yet the first PING also dials and authenticates, so a second
	// one measures the latency of a warm connection.
	cold := cl.PoolStats().IdleConns == 0
	var err error
	for try := 0; try < 2; try++ {
		cctx, cancel := context.WithTimeout(ctx, p.timeout)
		start := time.Now()
		err = cl.Ping(cctx).Err()
		h.Latency = time.Since(start)
		cancel()
		if err == nil || isRedisError(err) || ctx.Err() != nil || isTimeout(err) {
			break
		}
	}
	if err != nil && isTimeout(err) && ctx.Err() == nil {
		// Down, or only slow? One more PING, on a connection of its own whose
		// timeouts are longer, tells them apart.
		h.Slow, h.Latency = p.answersLate(ctx, cl)
	}
	if err != nil {
		h.Error = p.clean(m, err)
		if isAuthError(err) {
			h.Reachable, h.AuthFailed = true, true
		}
		return h
	}
	h.Reachable = true
	if cold {
		cctx, cancel := context.WithTimeout(ctx, p.timeout)
		start := time.Now()
		if cl.Ping(cctx).Err() == nil {
			h.Latency = time.Since(start)
		}
		cancel()
	}

	// TIME alone, for a tight round trip.
	cctx, cancel := context.WithTimeout(ctx, p.timeout)
	t0 := time.Now()
	server, err := cl.Time(cctx).Result()
	t1 := time.Now()
	cancel()
	switch {
	case err == nil:
		rtt := t1.Sub(t0)
		mid := t0.Add(rtt / 2)
		h.ClockOffset = server.Sub(mid.Round(0))
		h.ClockUncertainty = rtt / 2
		if h.ClockUncertainty <= 0 {
			h.ClockUncertainty = time.Nanosecond
		}
	case !isRedisError(err):
		return p.lost(m, h, err)
	}

	// INFO and CONFIG GET, pipelined. CONFIG GET takes one pattern per call on Redis
	// before 7, so each setting is its own command.
	names := p.settingNames()
	cctx, cancel = context.WithTimeout(ctx, p.timeout)
	defer cancel()
	pipe := cl.Pipeline()
	info := pipe.Info(cctx)
	cfgs := make([]*redis.MapStringStringCmd, len(names))
	for j, n := range names {
		cfgs[j] = pipe.ConfigGet(cctx, n)
	}
	if _, err := pipe.Exec(cctx); err != nil && !isRedisError(err) {
		return p.lost(m, h, err)
	}
	if err := info.Err(); err != nil {
		h.InfoError = p.clean(m, err)
	} else {
		fillInfo(&h, info.Val())
	}
	h.Config = map[string]string{}
	for j, cmd := range cfgs {
		if err := cmd.Err(); err != nil {
			h.ConfigError = p.clean(m, err)
			h.Config = nil
			break
		}
		if v, ok := cmd.Val()[names[j]]; ok {
			h.Config[names[j]] = v
		}
	}
	return h
}

// lost records a master that stopped answering in the middle of a probe.
func (p *Prober) lost(m *topology.Master, h topology.NodeHealth, err error) topology.NodeHealth {
	h.Reachable = false
	h.Error = p.clean(m, err)
	return h
}

// settingNames returns the watched settings plus the declared ones, each once, in
// Redis CONFIG spelling.
func (p *Prober) settingNames() []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range watchedSettings {
		seen[n] = true
		out = append(out, n)
	}
	for _, s := range p.c.Settings {
		n := ConfigName(s.Name)
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// clean turns an error into a message without the master's password.
func (p *Prober) clean(m *topology.Master, err error) string {
	msg := err.Error()
	if m.Password != "" {
		msg = strings.ReplaceAll(msg, m.Password, "(sensitive)")
	}
	return msg
}

// fillInfo copies the fields of interest from an INFO reply.
func fillInfo(h *topology.NodeHealth, info string) {
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		switch k {
		case "run_id":
			h.RunID = v
		case "redis_version":
			if h.Version == "" { // a server's own version field wins (valkey_version...)
				h.Version = v
			}
		case "server_name":
			h.Server = v
		case "valkey_version", "dragonfly_version":
			h.Version = v
			if h.Server == "" {
				h.Server = strings.TrimSuffix(k, "_version")
			}
		case "executable":
			if strings.Contains(strings.ToLower(v), "keydb") && h.Server == "" {
				h.Server = "keydb"
			}
		case "redis_mode":
			h.Mode = v
		case "uptime_in_seconds":
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				h.Uptime = time.Duration(n) * time.Second
			}
		case "role":
			h.Role = v
		case "connected_slaves":
			h.Replicas, _ = strconv.Atoi(v)
		case "evicted_keys":
			h.EvictedKeys, _ = strconv.ParseInt(v, 10, 64)
		case "aof_last_write_status":
			h.AOFLastWriteStatus = v
		case "rdb_last_bgsave_status":
			h.RDBLastBgsaveStatus = v
		}
	}
}

// ConfigName returns the Redis CONFIG spelling of a setting name as written in a
// topology file: "maxmemory_policy" and "maxmemory-policy" both give "maxmemory-policy".
func ConfigName(name string) string { return strings.ReplaceAll(strings.TrimSpace(name), "_", "-") }

func isRedisError(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled)
}

// answersLate pings through a one-off client like cl whose timeouts are
// slowBound: true, with the time the answer took, when the master answers then.
func (p *Prober) answersLate(ctx context.Context, cl *redis.Client) (bool, time.Duration) {
	opts := *cl.Options()
	bound := slowBound(p.timeout)
	opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout = bound, bound, bound
	opts.PoolSize, opts.MinIdleConns, opts.MaxRetries = 1, 0, -1
	late := redis.NewClient(&opts)
	defer late.Close()
	cctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	start := time.Now()
	if late.Ping(cctx).Err() != nil {
		return false, 0
	}
	return true, time.Since(start)
}

// slowBound is how long a master that missed the node timeout is given to answer
// at all: one that answers within it is slow, not down.
func slowBound(timeout time.Duration) time.Duration { return max(time.Second, 10*timeout) }

func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}

// isAuthError reports whether err is the server refusing the credentials.
func isAuthError(err error) bool {
	msg := err.Error()
	for _, s := range []string{"WRONGPASS", "NOAUTH", "invalid password", "invalid username-password", "AUTH <password> called without"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
